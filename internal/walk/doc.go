// Package walk goes through folders that a sandboxed script may be
// changing as they are read, by descriptors and without following a
// symlink: the work folder and the write grants the watch adds up, the
// artifact roots, the folders swept after a run.
//
// For most uses: NoFollow calls a function with the lstat(2) data of
// every entry under a root, NoFollowAt also gives it the entry's folder
// descriptor and lets it skip a folder, OpenNoFollow opens one file and
// OpenParent the folder holding one, with no symlink followed on the way
// from "/"; ResolveUnplanted resolves a path as the kernel would but
// stops at a symlink a sandboxed script could have planted.
//
// It runs in the supervisor. Descriptors and symlink-free opens are a
// Unix matter: elsewhere the package is empty.
package walk
