package boltstore

import (
	"hash/fnv"
	"strings"
	"testing"
)

// A crafted file whose root is a chain of branch pages, each the parent of
// the next, is refused at the depth bound with a short error. Without the
// bound the walk recursed once per page and wrapped its error at every
// level: a chain of 100 000 pages built an error of megabytes and took
// minutes (review of issue 33's corrupt-file check).
func TestBoltChainOfBranchPagesIsRefusedAtTheDepthBound(t *testing.T) {
	const pageSize, chain = 1024, 20_000
	pages := uint64(2 + chain + 1)
	file := make([]byte, pages*pageSize)
	for id := uint64(2); id < pages; id++ {
		p := file[id*pageSize:]
		ne.PutUint64(p[0:], id)
		if id == pages-1 {
			ne.PutUint16(p[8:], leafPageFlag) // an empty leaf ends the chain
			continue
		}
		ne.PutUint16(p[8:], branchPageFlag)
		ne.PutUint16(p[10:], 1)
		ne.PutUint32(p[pageHeaderSize:], branchElementSize) // the key follows the element
		ne.PutUint32(p[pageHeaderSize+4:], 1)
		ne.PutUint64(p[pageHeaderSize+8:], id+1)
	}
	for id := uint64(0); id < 2; id++ {
		p := file[id*pageSize:]
		ne.PutUint64(p[0:], id)
		ne.PutUint16(p[8:], 0x04) // a meta page
		m := p[pageHeaderSize : pageHeaderSize+metaSize]
		ne.PutUint32(m[0:], boltMagic)
		ne.PutUint32(m[4:], boltVersion)
		ne.PutUint32(m[8:], pageSize)
		ne.PutUint64(m[16:], 2) // the root bucket's page
		ne.PutUint64(m[32:], noFreelistPgid)
		ne.PutUint64(m[40:], pages)
		ne.PutUint64(m[48:], id)
		h := fnv.New64a()
		_, _ = h.Write(m[:56])
		ne.PutUint64(m[56:], h.Sum64())
	}
	err := verifyBoltPages(file)
	if err == nil || !strings.Contains(err.Error(), "levels of pages") {
		t.Fatalf("a chain of %d branch pages: %v; want the depth bound", chain, err)
	}
	if len(err.Error()) > 64*64 {
		t.Fatalf("the error runs to %d bytes", len(err.Error()))
	}
}
