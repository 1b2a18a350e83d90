# The authors' spectral-regularised MMD test (Hagrass, Sriperumbudur & Li, 2024) on the
# data sets of `aggregated_papers.py hagrass` (exported by its `hagrass_export` step).
#
# Sources their "2 sample codes/spectral_test.R" from a checkout (nothing of it is copied
# here) and runs `compute_test` with the settings of their Gaussian-shift experiment:
# Showalter filter (method = 2), Gaussian kernel, Lambda = 10^seq(-6, 1, 0.75),
# h_mult = 10^seq(-2, 2, 0.5), s = 20 held-out points, 60 permutations, alpha = 0.05,
# Bonferroni over the 90 (bandwidth, lambda) pairs. rdist::pdist/cdist (not packaged for
# Debian) are replaced by full Euclidean distance matrices with the same values.
#
# Run (from the repository root):
#   Rscript benchmarks/replications/srmmd_authors.R "/path/to/2 sample codes/spectral_test.R" \
#       /tmp/hagrass-data benchmarks/results/replication_hagrass_authors.csv
suppressPackageStartupMessages({
  library(expm)
  library(Matrix)
  library(dplyr)
  library(parallel)
})
pdist <- function(X, metric = "euclidean") as.matrix(dist(X, method = "euclidean"))
cdist <- function(X, Y, metric = "euclidean") {
  sqrt(pmax(outer(rowSums(X^2), rowSums(Y^2), "+") - 2 * X %*% t(Y), 0))
}
args <- commandArgs(trailingOnly = TRUE)
source(args[1])
method <- 2
kernel_type <- 1
num_perm <- 60
Lambda <- 10^seq(-6, 1, 0.75)
h_mult_arr <- 10^seq(-2, 2, 0.5)
alpha <- 0.05
s <- 20
index <- read.csv(file.path(args[2], "index.csv"))
rows <- list()
t0 <- Sys.time()
for (i in seq_len(nrow(index))) {
  x <- as.matrix(read.csv(file.path(args[2], index$x[i]), header = FALSE))
  y <- as.matrix(read.csv(file.path(args[2], index$y[i]), header = FALSE))
  n <- nrow(x); m <- nrow(y); d <- ncol(x)
  set.seed(23 + 5 * i)
  err <- compute_test(samples_x = t(x), samples_y = t(y), n = n, m = m, s = s,
                      num_perm = num_perm, h_arr = h_mult_arr, Lambda_arr = Lambda,
                      alpha = alpha)
  rows[[i]] <- data.frame(shift = index$shift[i], rep = index$rep[i],
                          test = "SR-Show, 90 members (authors' R code)", pvalue = NA,
                          reject = 1 - err)
}
write.csv(do.call(rbind, rows), args[3], row.names = FALSE)
cat(sprintf("%d data sets in %.0f s\n", nrow(index), as.numeric(Sys.time() - t0, units = "secs")))
