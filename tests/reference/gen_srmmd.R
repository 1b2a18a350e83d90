# Reference values of the spectral-regularised MMD from the authors' R code.
#
# Hagrass, Sriperumbudur & Li, "Spectral regularized kernel two-sample tests"
# (Ann. Statist. 2024), code at github.com/OmarHagrass/Spectral-regularized-two-sample-test
# ("2 sample codes/spectral_test.R"). This script sources that file from a checkout
# (nothing of it is copied here or into kmtests) and evaluates, on fixed data, their
# statistic eta_lambda for a grid of lambdas with the Tikhonov (method = 1) and
# Showalter (method = 2) filters, on the observed split and on one permutation of the
# pooled non-held-out points, with their held-out design (z_i = x_i or y_i by a coin
# for the first s points). Output: srmmd_reference.json, read by
# tests/test_reference_srmmd.py.
#
# Needs R with the packages expm, Matrix and dplyr (Debian: r-base-core r-cran-expm
# r-cran-matrix r-cran-dplyr). Their code calls rdist::pdist / rdist::cdist (full
# distance matrices); rdist is not packaged for Debian, so the two are defined below
# with the same results (full Euclidean distance matrices).
#
# Run: Rscript tests/reference/gen_srmmd.R "/path/to/checkout/2 sample codes/spectral_test.R"

suppressPackageStartupMessages({
  library(expm)
  library(Matrix)
  library(dplyr)
})

pdist <- function(X, metric = "euclidean") {
  stopifnot(metric == "euclidean")
  as.matrix(dist(X, method = "euclidean"))
}
cdist <- function(X, Y, metric = "euclidean") {
  stopifnot(metric == "euclidean")
  sq <- outer(rowSums(X^2), rowSums(Y^2), "+") - 2 * X %*% t(Y)
  sqrt(pmax(sq, 0))
}

args <- commandArgs(trailingOnly = TRUE)
source(args[1])

num <- function(v) paste0("[", paste(sprintf("%.17g", v), collapse = ","), "]")
mat <- function(M) paste0("[", paste(apply(M, 1, num), collapse = ","), "]")

cases <- list()
k <- 0
for (cfg in list(c(seed = 11, n = 40, m = 36, d = 2, s = 8, shift = 0.7),
                 c(seed = 12, n = 30, m = 30, d = 3, s = 6, shift = 0.0))) {
  set.seed(cfg[["seed"]])
  n <- cfg[["n"]]; m <- cfg[["m"]]; d <- cfg[["d"]]; s <- cfg[["s"]]
  samples_x <- matrix(rnorm(n * d), nrow = d)                     # columns are points
  samples_y <- matrix(rnorm(m * d, mean = cfg[["shift"]]), nrow = d)
  kernel_type <- 1                                                # Gaussian
  h_mult_arr <- c(1)
  Lambda <- 10^seq(-6, 1, 0.75)
  bern <- sample(c(0, 1), s, replace = TRUE)                      # as in compute_test
  samples_z <- t(bern * (t(samples_x[, 1:s])) + (1 - bern) * (t(samples_y[, 1:s])))
  hk <- get_h_Ks(samples_x = samples_x, samples_y = samples_y, samples_z = samples_z)
  cov_eigs <- lapply(h_mult_arr, get_cov_eigs, Ks = hk$K_s)
  xr <- samples_x[, (s + 1):n]; yr <- samples_y[, (s + 1):m]
  out <- list()
  for (method in c(1, 2)) {
    obs <- eval_stat(n = n - s, m = m - s, h = hk$h, cov_eigs = cov_eigs, samples_x = xr,
                     samples_y = yr, samples_z = samples_z, Lambda = Lambda, perm_id = 0)
    set.seed(100 + method)
    perm <- sample(seq(1, (n - s) + (m - s)))                     # what eval_stat draws
    set.seed(100 + method)
    per <- eval_stat(n = n - s, m = m - s, h = hk$h, cov_eigs = cov_eigs, samples_x = xr,
                     samples_y = yr, samples_z = samples_z, Lambda = Lambda, perm_id = 1)
    out[[method]] <- list(obs = obs, per = per, perm = perm)
  }
  k <- k + 1
  cases[[k]] <- paste0(
    "{\"x\":", mat(t(samples_x)), ",\"y\":", mat(t(samples_y)), ",\"s\":", s,
    ",\"z\":", mat(t(samples_z)), ",\"h\":", sprintf("%.17g", hk$h),
    ",\"rank\":", length(cov_eigs[[1]]$eig_val),
    ",\"eig_val\":", num(cov_eigs[[1]]$eig_val),
    ",\"Lambda\":", num(Lambda),
    ",\"tikhonov\":{\"observed\":", num(out[[1]]$obs), ",\"permuted\":", num(out[[1]]$per),
    ",\"permutation\":", num(out[[1]]$perm), "}",
    ",\"showalter\":{\"observed\":", num(out[[2]]$obs), ",\"permuted\":", num(out[[2]]$per),
    ",\"permutation\":", num(out[[2]]$perm), "}}")
}
writeLines(paste0("{\"R\":\"", R.version.string, "\",\"cases\":[",
                  paste(unlist(cases), collapse = ","), "]}"),
           "tests/reference/srmmd_reference.json")  # run from the repository root
