//go:build !s3cond_unsafe_ignore_rename_intents

package leasedwrite

// unsafeIgnoreRenameIntents is false in every build that may ship
// (renameintent_unsafe.go says what the tag does).
const unsafeIgnoreRenameIntents = false
