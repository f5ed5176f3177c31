// The Pod sandbox's program, written here: it needs nothing beyond the standard library.
module olmpy.local/hack/pause

go 1.26.0
