package proxy

import "io"

// writerOnly and readerOnly hide ReadFrom and WriteTo, so that io.Copy
// between them does not recurse into them.
type writerOnly struct{ io.Writer }
type readerOnly struct{ io.Reader }
