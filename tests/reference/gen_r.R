## Generate tests/reference/r_reference.json from R (kernlab, energy, base R).
##
## Run from the repository root:
##
##     Rscript tests/reference/gen_r.R
##
## Inputs are drawn with set.seed() and written into the JSON together with
## the reference values, so tests/test_reference.py does not need R.
## jsonlite is not installed, so a minimal JSON writer is defined below
## (numbers with "%.17g", which round-trips IEEE doubles exactly).
##
## Calls (verbatim in the "call" fields of the JSON):
##   kernlab::kmmd(x, y, kernel = rbfdot(sigma = s))        mmdstats(.)[1], [2]
##   kernlab::kmmd(x, y, kernel = laplacedot(sigma = s))
##   kernlab::kmmd(x, y, kernel = polydot(degree, scale, offset))
##   energy::edist(rbind(x, y), sizes = c(n, m))
##   energy::eqdist.etest(rbind(x, y), sizes = c(n, m), R = 0)$statistic
##   energy::dcov(x, y), energy::dcor(x, y), energy::dcovU(x, y), energy::bcdcor(x, y)
##   energy::dcov(as.dist(1 - Kx), as.dist(1 - Ky)), energy::dcovU(same)
##       with Kx = kernelMatrix(rbfdot(sigma = sx), x): a Gaussian HSIC through
##       energy's double/U-centring of the kernel-induced distance 1 - k
##   gretton_hsic_gamma(Kx, Ky): Gretton et al. (2008) gamma approximation,
##       written out below from the paper / the authors' hsicTestGamma.m.
## kernlab's rbfdot(sigma) is exp(-sigma ||x - y||^2): sigma = 1 / (2 bandwidth^2);
## laplacedot(sigma) is exp(-sigma ||x - y||): sigma = 1 / bandwidth;
## polydot(degree, scale, offset) is (scale <x, y> + offset)^degree.

suppressPackageStartupMessages({
  library(kernlab)
  library(energy)
})

SEED <- 20240607L
set.seed(SEED)
out_path <- file.path("tests", "reference", "r_reference.json")

## ---------------------------------------------------------------- JSON writer
to_json <- function(v, indent = 0L) {
  pad <- strrep(" ", indent + 1L)
  if (is.list(v)) {
    if (length(v) == 0L) return(if (is.null(names(v))) "[]" else "{}")
    items <- vapply(v, to_json, "", indent = indent + 1L)
    if (!is.null(names(v))) {
      items <- paste0("\"", names(v), "\": ", items)
      return(paste0("{\n", pad, paste(items, collapse = paste0(",\n", pad)), "\n",
                    strrep(" ", indent), "}"))
    }
    return(paste0("[\n", pad, paste(items, collapse = paste0(",\n", pad)), "\n",
                  strrep(" ", indent), "]"))
  }
  if (is.character(v)) {
    s <- gsub("\\\\", "\\\\\\\\", v)
    s <- gsub("\"", "\\\\\"", s)
    s <- paste0("\"", s, "\"")
    return(if (length(v) == 1L) s else paste0("[", paste(s, collapse = ", "), "]"))
  }
  if (is.logical(v)) {
    s <- ifelse(v, "true", "false")
    return(if (length(v) == 1L) s else paste0("[", paste(s, collapse = ", "), "]"))
  }
  if (is.matrix(v)) {
    rows <- apply(v, 1L, function(r) paste0("[", paste(sprintf("%.17g", r), collapse = ", "), "]"))
    return(paste0("[", paste(rows, collapse = ", "), "]"))
  }
  stopifnot(is.numeric(v), all(is.finite(v)))
  s <- sprintf("%.17g", as.numeric(v))
  if (length(v) == 1L) s else paste0("[", paste(s, collapse = ", "), "]")
}

num <- function(v) as.numeric(unname(v))

## ------------------------------------------------------------ kernlab kmmd
kmmd_ref <- function(x, y, kern, kern_call) {
  res <- kmmd(x, y, kernel = kern)
  M <- min(nrow(x), nrow(y))
  Kxy <- kernelMatrix(kern, x, y)@.Data
  list(
    mmd1 = num(mmdstats(res)[1]),
    mmd3 = num(mmdstats(res)[2]),
    ## quantities that relate mmd3 (pairs x_i, y_i; i <= M) to MMD^2_u, from kernlab's Gram
    trace_Kxy_M = sum(diag(Kxy[1:M, 1:M, drop = FALSE])),
    sum_Kxy_M = sum(Kxy[1:M, 1:M]),
    call = paste0("kernlab::kmmd(x, y, kernel = ", kern_call, ")")
  )
}

two_sample_case <- function(name, x, y, bw_rbf, bw_laplace, degree, offset) {
  n <- nrow(x); m <- nrow(y)
  s_rbf <- 1 / (2 * bw_rbf^2)
  s_lap <- 1 / bw_laplace
  z <- rbind(x, y)
  list(
    name = name, x = x, y = y,
    bandwidth_gaussian = bw_rbf, sigma_rbfdot = s_rbf,
    bandwidth_laplacian = bw_laplace, sigma_laplacedot = s_lap,
    poly_degree = degree, poly_offset = offset,
    kmmd_rbf = kmmd_ref(x, y, rbfdot(sigma = s_rbf), sprintf("rbfdot(sigma = %.17g)", s_rbf)),
    kmmd_laplace = kmmd_ref(x, y, laplacedot(sigma = s_lap),
                            sprintf("laplacedot(sigma = %.17g)", s_lap)),
    kmmd_poly = kmmd_ref(x, y, polydot(degree = degree, scale = 1, offset = offset),
                         sprintf("polydot(degree = %d, scale = 1, offset = %.17g)", degree, offset)),
    edist = num(edist(z, sizes = c(n, m))),
    edist_call = "as.numeric(energy::edist(rbind(x, y), sizes = c(n, m)))",
    eqdist_etest = num(eqdist.etest(z, sizes = c(n, m), R = 0)$statistic),
    eqdist_etest_call = "energy::eqdist.etest(rbind(x, y), sizes = c(n, m), R = 0)$statistic"
  )
}

## ------------------------------------------- Gretton et al. (2008) gamma test
## A kernel statistical test of independence (NIPS 2007), Sec. 3 / Theorem 4:
##   m HSIC_b ~ Gamma(shape = E^2 / V, scale = m V / E), with
##   E = (1/m) (1 + mu_x mu_y - mu_x - mu_y)     (Gaussian kernels, k(x, x) = 1),
##       mu_x = (1 / (m (m - 1))) sum_{i != j} K_ij   (estimate of ||mu_x||^2),
##   V = 2 (m - 4)(m - 5) / (m)_4 * (1 / (m (m - 1))) sum_{i != j} (Kc_ij Lc_ij)^2,
##       Kc = H K H, Lc = H L H (the authors' code writes 72 ((Kc o Lc) / 6)^2).
gretton_hsic_gamma <- function(K, L) {
  m <- nrow(K)
  H <- diag(m) - matrix(1 / m, m, m)
  Kc <- H %*% K %*% H
  Lc <- H %*% L %*% H
  test_stat <- sum(Kc * Lc) / m                       # = m * HSIC_b
  B <- (Kc * Lc)^2
  var_hsic <- 2 * (m - 4) * (m - 5) / (m * (m - 1) * (m - 2) * (m - 3)) *
    (sum(B) - sum(diag(B))) / (m * (m - 1))
  mu_x <- (sum(K) - sum(diag(K))) / (m * (m - 1))
  mu_y <- (sum(L) - sum(diag(L))) / (m * (m - 1))
  mean_hsic <- (1 + mu_x * mu_y - mu_x - mu_y) / m
  shape <- mean_hsic^2 / var_hsic
  scale <- var_hsic * m / mean_hsic                   # scale for m * HSIC_b
  list(
    hsic_b = test_stat / m, null_mean = mean_hsic, null_var = var_hsic,
    gamma_shape = shape, gamma_scale_for_HSIC_b = scale / m,
    pvalue = pgamma(test_stat, shape = shape, scale = scale, lower.tail = FALSE),
    call = "gretton_hsic_gamma(Kx, Ky) in tests/reference/gen_r.R"
  )
}

independence_case <- function(name, x, y, bw_x, bw_y) {
  sx <- 1 / (2 * bw_x^2); sy <- 1 / (2 * bw_y^2)
  Kx <- kernelMatrix(rbfdot(sigma = sx), x)@.Data
  Ky <- kernelMatrix(rbfdot(sigma = sy), y)@.Data
  Dx <- as.dist(1 - Kx); Dy <- as.dist(1 - Ky)
  list(
    name = name, x = x, y = y,
    bandwidth_x = bw_x, bandwidth_y = bw_y, sigma_x = sx, sigma_y = sy,
    energy = list(
      dcov = num(dcov(x, y)), dcor = num(dcor(x, y)),
      dcovU = num(dcovU(x, y)), bcdcor = num(bcdcor(x, y)),
      call = "energy::dcov(x, y); energy::dcor(x, y); energy::dcovU(x, y); energy::bcdcor(x, y)"
    ),
    gaussian_via_energy = list(
      dcov = num(dcov(Dx, Dy)), dcovU = num(dcovU(Dx, Dy)),
      call = paste0("Kx <- kernlab::kernelMatrix(rbfdot(sigma = sigma_x), x); ",
                    "Ky <- kernlab::kernelMatrix(rbfdot(sigma = sigma_y), y); ",
                    "energy::dcov(as.dist(1 - Kx), as.dist(1 - Ky)); ",
                    "energy::dcovU(as.dist(1 - Kx), as.dist(1 - Ky))")
    ),
    gretton_gamma = gretton_hsic_gamma(Kx, Ky)
  )
}

## --------------------------------------------------------------------- data
two <- list()
x <- matrix(rnorm(22), 11, 2)
y <- matrix(rnorm(22, mean = 0.8, sd = 1.3), 11, 2)
two[[1]] <- two_sample_case("balanced_2d", x, y, 1.3, 1.7, 3L, 0.5)
x <- matrix(rnorm(30), 10, 3)
y <- matrix(rt(42, df = 5), 14, 3) + matrix(c(0.9, 0, -0.5), 14, 3, byrow = TRUE)
two[[2]] <- two_sample_case("unbalanced_3d", x, y, 0.9, 2.5, 2L, 1.0)

ind <- list()
x <- matrix(rnorm(30), 15, 2)
y <- matrix(x[, 1]^2 + 0.5 * rnorm(15), 15, 1)
ind[[1]] <- independence_case("n15_2d_1d", x, y, 1.1, 0.7)
x <- matrix(runif(30, -2, 2), 30, 1)
y <- cbind(cos(2 * x[, 1]) + 0.3 * rnorm(30), x[, 1] * rnorm(30))
ind[[2]] <- independence_case("n30_1d_2d", x, y, 0.8, 1.4)
x <- matrix(rnorm(80), 40, 2)
y <- matrix(rnorm(80), 40, 2) + 0.25 * x[, c(2, 1)]
ind[[3]] <- independence_case("n40_2d_2d_weak", x, y, 1.0, 1.2)

rng <- RNGkind()
out <- list(
  generator = "tests/reference/gen_r.R",
  seed = SEED,
  rng = paste0("set.seed(seed), RNGkind = ", paste(rng, collapse = "/"),
               "; draws in the order of gen_r.R"),
  versions = list(R = R.version.string,
                  kernlab = as.character(packageVersion("kernlab")),
                  energy = as.character(packageVersion("energy"))),
  two_sample = two,
  independence = ind
)
writeLines(to_json(out), out_path)
message("wrote ", out_path)
