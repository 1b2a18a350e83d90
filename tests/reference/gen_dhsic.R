## Generate tests/reference/dhsic_reference.json from the R package dHSIC.
##
## Run from the repository root, with the package installed from its source
## (the CRAN package dHSIC by Pfister and Peters, GPL-3; its read-only GitHub
## mirror cran/dHSIC, tags 2.2 and 2.1):
##
##     R CMD INSTALL -l /tmp/Rlib   <dHSIC 2.2 source>     # needs r-cran-rcpp
##     R CMD INSTALL -l /tmp/Rlib21 <dHSIC 2.1 source>
##     DHSIC_LIB=/tmp/Rlib DHSIC21_LIB=/tmp/Rlib21 Rscript tests/reference/gen_dhsic.R
##
## Only numbers produced by the package's exported functions are stored: no
## code of dHSIC is copied here. The gamma approximation's shape and scale and
## its mean and variance estimates are local variables of dhsic.test; they are
## read with base R's trace() (an exit hook run in the function's frame).
##
## dHSIC 2.2's bootstrap (method = "bootstrap") subsets the Gram matrices with
## sample(0:(len-1), replace = TRUE): the index 0 drops a row and a column and
## the test stops with "non-conformable arrays" (recorded below as
## bootstrap_2.2_error); version 2.1 drew the same indices for its C++
## resampler (0-based), i.e. resampled all len observations. The bootstrap
## p-values are therefore those of version 2.1 (every other number: 2.2).
##
## Calls (verbatim in the "calls" fields of the JSON), X = list(x1, ..., xd):
##   dhsic(X, kernel = kernels, bandwidth = bandwidths)$dHSIC
##   dhsic.test(X, method = "gamma", kernel = kernels, bandwidth = bandwidths)
##   dhsic.test(X, method = "permutation", B = B, ...)$p.value
##   dhsic.test(X, method = "bootstrap", B = B, ...)$p.value     (version 2.1)
## with kernels "gaussian.fixed" (exp(-||x - y||^2 / (2 bw^2)), the given
## bandwidths), "gaussian" (the package's median-heuristic bandwidth, recorded
## as r_bandwidths) or "discrete" (1{x = y}).

SEED <- 20260503L
set.seed(SEED)
out_path <- file.path("tests", "reference", "dhsic_reference.json")
lib22 <- Sys.getenv("DHSIC_LIB", unset = NA)
lib21 <- Sys.getenv("DHSIC21_LIB", unset = NA)
stopifnot(!is.na(lib22), !is.na(lib21))
suppressPackageStartupMessages(library(dHSIC, lib.loc = lib22))
stopifnot(as.character(packageVersion("dHSIC", lib.loc = lib22)) == "2.2")

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

gamma_capture <- NULL
suppressMessages(trace("dhsic.test", print = FALSE, exit = quote(
  if (method == "gamma") gamma_capture <<- list(shape = a, scale = b, mean = exp.est,
                                                 var = var.est))))

## one case: the data, the kernels, and what the package computes
joint_case <- function(name, X, kernels, bandwidths, B = 0L) {
  d <- length(X)
  bw_arg <- if (is.null(bandwidths)) 1 else bandwidths
  val <- dhsic(X, kernel = kernels, bandwidth = bw_arg)
  gamma_capture <<- NULL
  gam <- dhsic.test(X, method = "gamma", kernel = kernels, bandwidth = bw_arg)
  case <- list(
    name = name, d = d, n = nrow(X[[1]]),
    variables = lapply(X, function(v) as.matrix(v)),
    kernels = kernels,
    given_bandwidths = if (is.null(bandwidths)) list() else bandwidths,
    r_bandwidths = lapply(val$bandwidth, function(b) if (is.na(b)) "NA" else b),
    dhsic = val$dHSIC,
    gamma = list(statistic = gam$statistic, p_value = gam$p.value,
                 crit_value = gam$crit.value, shape = gamma_capture$shape,
                 scale = gamma_capture$scale, mean = gamma_capture$mean,
                 var = gamma_capture$var),
    calls = c(
      sprintf("dhsic(X, kernel = kernels, bandwidth = %s)$dHSIC",
              if (is.null(bandwidths)) "1 (unused)" else "bandwidths"),
      "dhsic.test(X, method = \"gamma\", kernel = kernels, bandwidth = bandwidths)")
  )
  if (B > 0L) {
    perm <- dhsic.test(X, method = "permutation", kernel = kernels, bandwidth = bw_arg,
                       B = B)
    case$permutation <- list(B = B, p_value = perm$p.value,
                             call = "dhsic.test(X, method = \"permutation\", B = B, ...)")
  }
  case
}

gauss <- function(d) rep("gaussian.fixed", d)
cases <- list()

## d = 2: a linear dependence
x <- matrix(rnorm(30), ncol = 1); y <- 0.4 * x + matrix(rnorm(30), ncol = 1)
cases[[1]] <- joint_case("d2_fixed", list(x, y), gauss(2), c(0.9, 1.2), B = 4000L)
cases[[2]] <- joint_case("d2_median", list(x, y), "gaussian", NULL)

## d = 3: a product interaction
x <- matrix(rnorm(50), ncol = 1); y <- matrix(rnorm(50), ncol = 1)
z <- 0.5 * x * y + matrix(rnorm(50), ncol = 1)
cases[[3]] <- joint_case("d3_fixed", list(x, y, z), gauss(3), c(1.0, 0.8, 1.3), B = 4000L)
cases[[4]] <- joint_case("d3_median", list(x, y, z), "gaussian", NULL)

## d = 3, jointly independent
x <- matrix(rnorm(30), ncol = 1); y <- matrix(rnorm(30), ncol = 1)
z <- matrix(rnorm(30), ncol = 1)
cases[[5]] <- joint_case("d3_null", list(x, y, z), gauss(3), c(0.7, 1.1, 0.9), B = 4000L)

## d = 3, XOR: pairwise independent, jointly dependent (the package's own example)
x <- matrix(rbinom(40, 1, 0.5), ncol = 1); y <- matrix(rbinom(40, 1, 0.5), ncol = 1)
z <- matrix(as.numeric((x + y) == 1) + 0.5 * rnorm(40), ncol = 1)
cases[[6]] <- joint_case("d3_xor_discrete", list(x, y, z),
                         c("discrete", "discrete", "gaussian"), NULL, B = 4000L)

## d = 4: a two-column variable, uniform and normal variables
x1 <- matrix(rnorm(48), ncol = 2); x2 <- matrix(rnorm(24), ncol = 1)
x3 <- matrix(runif(24), ncol = 1)
x4 <- x1[, 1, drop = FALSE] * x2 + 0.5 * matrix(rnorm(24), ncol = 1)
cases[[7]] <- joint_case("d4_fixed", list(x1, x2, x3, x4), gauss(4), c(1.5, 1.0, 0.4, 0.9))
cases[[8]] <- joint_case("d4_median", list(x1, x2, x3, x4), "gaussian", NULL)

## the bootstrap of version 2.2 (fails), then of version 2.1
X3 <- list(matrix(cases[[3]]$variables[[1]]), matrix(cases[[3]]$variables[[2]]),
           matrix(cases[[3]]$variables[[3]]))
err22 <- tryCatch({
  dhsic.test(X3, method = "bootstrap", kernel = gauss(3), bandwidth = c(1.0, 0.8, 1.3),
             B = 10L)
  "no error"
}, error = function(e) conditionMessage(e))
untrace("dhsic.test")
unloadNamespace("dHSIC")
suppressPackageStartupMessages(library(dHSIC, lib.loc = lib21))
stopifnot(as.character(packageVersion("dHSIC")) == "2.1")
boot <- function(case) {
  X <- lapply(case$variables, function(v) matrix(v, nrow = case$n))
  p <- dhsic.test(X, method = "bootstrap", kernel = case$kernels,
                  bandwidth = unlist(case$given_bandwidths), B = 4000L)$p.value
  list(B = 4000L, p_value = p, version = "2.1",
       call = "dhsic.test(X, method = \"bootstrap\", B = B, ...)$p.value  # dHSIC 2.1")
}
cases[[3]]$bootstrap <- boot(cases[[3]])
cases[[5]]$bootstrap <- boot(cases[[5]])

rng <- RNGkind()
out <- list(
  generator = "tests/reference/gen_dhsic.R",
  seed = SEED,
  rng = paste0("set.seed(seed), RNGkind = ", paste(rng, collapse = "/"),
               "; draws in the order of gen_dhsic.R"),
  versions = list(R = R.version.string, dHSIC = "2.2 (bootstrap: 2.1)",
                  Rcpp = as.character(packageVersion("Rcpp"))),
  bootstrap_2.2_error = err22,
  cases = cases
)
writeLines(to_json(out), out_path)
message("wrote ", out_path)
