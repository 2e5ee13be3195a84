# A package for `dynrec run -m pkg.mod`.
