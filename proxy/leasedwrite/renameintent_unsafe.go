//go:build s3cond_unsafe_ignore_rename_intents

package leasedwrite

// unsafeIgnoreRenameIntents, only in a build with the tag
// s3cond_unsafe_ignore_rename_intents, reads no rename intent: a rename
// stopped between its copy and its delete is never finished, and the next
// writer of either key writes into the middle of it. It is the negative
// control of TestRenameCrashBetweenCopyAndDelete (e2e) and of
// TestRenameLeftByAVanishedHolderIsFinishedByTheNextWriter (here). Never
// ship a build with it.
const unsafeIgnoreRenameIntents = true
