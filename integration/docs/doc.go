// Package docs holds only a test: it keeps README.md a one-page front door
// (at most maxReadmeLines lines) and checks that every relative link of
// README.md and docs/*.md, to a file or to a heading, points at something
// that exists in the tree as it is.
package docs
