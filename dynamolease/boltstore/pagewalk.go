package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
)

// bbolt reads its file through a memory map and trusts every offset in it:
// a page whose header survived but whose elements did not sends a key
// comparison past the end of the map, and the process dies of SIGSEGV
// ("unexpected fault address"), which no recover() catches. So before bbolt
// reads anything beyond the meta pages (the file's id included), the file's
// bytes are walked here with bounds-checked reads, along every path bbolt's
// reads of the lease file take: from the meta page bbolt will use, every
// branch and leaf page, every bucket (inline ones too), and the synced free
// list. A file that passes holds no offset that leaves its page, no page
// beyond the file, no page reached twice (a cycle) and no empty branch page.
//
// bbolt's own tx.Check is no substitute: it reads through the same map with
// the same trust (it faults the same way), and on a goroutine of its own.
// debug.SetPanicOnFault with recover() would turn the fault into a panic,
// but only on the calling goroutine (not bbolt's free-list rebuild), and
// after a fault the file's other reads are still unproven. The walk reads
// bbolt's on-disk format version 2, unchanged since boltdb's first release;
// a version bbolt does not know is refused by bbolt's own open before it.

// The layout of bbolt's format version 2 (go.etcd.io/bbolt/internal/common).
const (
	pageHeaderSize    = 16 // id u64, flags u16, count u16, overflow u32
	branchElementSize = 16 // pos u32, ksize u32, pgid u64
	leafElementSize   = 16 // flags u32, pos u32, ksize u32, vsize u32
	bucketHeaderSize  = 16 // root pgid u64, sequence u64
	metaSize          = 64 // magic, version, page size, flags, root bucket, freelist, pgid, txid, checksum

	branchPageFlag   = 0x01
	leafPageFlag     = 0x02
	freelistPageFlag = 0x10
	bucketLeafFlag   = 0x01

	boltMagic       = 0xED0CDAED
	boltVersion     = 2
	noFreelistPgid  = ^uint64(0)
	freelistMaxSize = 0xFFFF // a count this large is kept in the first element
)

// maxTreeDepth bounds how deep the walk follows branch pages and nested
// buckets. A lease file's tree is a few levels deep (bbolt splits pages of
// kilobytes, and the store nests one bucket); a crafted chain of a hundred
// thousand branch pages would otherwise recurse that deep and build an
// error naming every level.
const maxTreeDepth = 64

var ne = binary.NativeEndian // bbolt writes its integers in the machine's order

// pageWalk checks one file's pages; visited catches cycles and pages
// shared by two parents.
type pageWalk struct {
	file     []byte
	pageSize uint64
	hwm      uint64 // the meta's page count: no page lies at or above it
	visited  map[uint64]bool
	depth    int // pages between the root and the page being checked
}

// boltMeta is the part of a meta page the walk needs.
type boltMeta struct {
	pageSize, root, freelist, pgid, txid uint64
}

// verifyBoltPages checks a lease file's bytes before bbolt maps them.
func verifyBoltPages(file []byte) error {
	pageSize, err := boltPageSize(file)
	if err != nil {
		return err
	}
	if uint64(len(file)) < 2*pageSize {
		// bbolt reads both meta pages through the map: past the end of
		// the file, a read faults (SIGBUS).
		return fmt.Errorf("file of %d bytes with pages of %d: shorter than its two meta pages", len(file), pageSize)
	}
	meta, err := chooseMeta(file, pageSize)
	if err != nil {
		return err
	}
	if meta.pgid < 2 || meta.pgid > uint64(len(file))/pageSize {
		return fmt.Errorf("meta page: %d pages, but the file holds %d", meta.pgid, uint64(len(file))/pageSize)
	}
	w := &pageWalk{file: file, pageSize: pageSize, hwm: meta.pgid, visited: map[uint64]bool{0: true, 1: true}}
	if meta.freelist != noFreelistPgid {
		if err := w.freelist(meta.freelist); err != nil {
			return err
		}
	}
	return w.tree(meta.root)
}

// boltPageSize finds the page size as bbolt's open does: from the first
// meta page if it is valid, else from the second, found at any power of
// two from 1 KiB to 16 MiB.
func boltPageSize(file []byte) (uint64, error) {
	if m, err := readMetaAt(file, 0); err == nil {
		return m.pageSize, nil
	}
	for i := range 15 {
		pos := uint64(1024) << i
		if pos+1024 >= uint64(len(file)) {
			break
		}
		if m, err := readMetaAt(file, pos); err == nil {
			return m.pageSize, nil
		}
	}
	return 0, errors.New("no valid meta page")
}

// chooseMeta picks the meta page bbolt uses: the valid one with the higher
// transaction id (bbolt's DB.meta).
func chooseMeta(file []byte, pageSize uint64) (boltMeta, error) {
	m0, err0 := readMetaAt(file, 0)
	m1, err1 := readMetaAt(file, pageSize)
	switch {
	case err0 == nil && (err1 != nil || m0.txid >= m1.txid):
		return m0, nil
	case err1 == nil:
		return m1, nil
	}
	return boltMeta{}, fmt.Errorf("no valid meta page: %v; %v", err0, err1)
}

// readMetaAt reads and validates the meta page at offset pos.
func readMetaAt(file []byte, pos uint64) (boltMeta, error) {
	if pos+pageHeaderSize+metaSize > uint64(len(file)) {
		return boltMeta{}, errors.New("meta page: past the end of the file")
	}
	b := file[pos+pageHeaderSize : pos+pageHeaderSize+metaSize]
	if ne.Uint32(b[0:]) != boltMagic || ne.Uint32(b[4:]) != boltVersion {
		return boltMeta{}, errors.New("meta page: not a bbolt version 2 meta page")
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:56])
	if h.Sum64() != ne.Uint64(b[56:]) {
		return boltMeta{}, errors.New("meta page: checksum mismatch")
	}
	pageSize := uint64(ne.Uint32(b[8:]))
	if pageSize < 1024 || pageSize&(pageSize-1) != 0 {
		return boltMeta{}, fmt.Errorf("meta page: page size %d", pageSize)
	}
	return boltMeta{pageSize: pageSize, root: ne.Uint64(b[16:]), freelist: ne.Uint64(b[32:]), pgid: ne.Uint64(b[40:]), txid: ne.Uint64(b[48:])}, nil
}

// page returns the bytes of page id, overflow pages included, after
// checking that it lies in the file, names itself id and is reached once.
func (w *pageWalk) page(id uint64, what string) ([]byte, uint16, error) {
	if id < 2 || id >= w.hwm {
		return nil, 0, fmt.Errorf("%s: page %d outside pages 2..%d", what, id, w.hwm-1)
	}
	if w.visited[id] {
		return nil, 0, fmt.Errorf("%s: page %d reached twice", what, id)
	}
	start := id * w.pageSize
	hdr := w.file[start : start+pageHeaderSize]
	if got := ne.Uint64(hdr[0:]); got != id {
		return nil, 0, fmt.Errorf("%s: page %d names itself %d", what, id, got)
	}
	overflow := uint64(ne.Uint32(hdr[12:]))
	if overflow >= w.hwm-id {
		return nil, 0, fmt.Errorf("%s: page %d runs %d pages past the last", what, id, overflow)
	}
	for i := id; i <= id+overflow; i++ {
		if w.visited[i] {
			return nil, 0, fmt.Errorf("%s: page %d overlaps page %d", what, id, i)
		}
		w.visited[i] = true
	}
	return w.file[start : start+(overflow+1)*w.pageSize], ne.Uint16(hdr[8:]), nil
}

func (w *pageWalk) freelist(id uint64) error {
	p, flags, err := w.page(id, "free list")
	if err != nil {
		return err
	}
	if flags != freelistPageFlag {
		return fmt.Errorf("free list: page %d has flags %#x", id, flags)
	}
	count, first := uint64(ne.Uint16(p[10:])), uint64(pageHeaderSize)
	if count == freelistMaxSize {
		if len(p) < pageHeaderSize+8 {
			return fmt.Errorf("free list: page %d too short for its count", id)
		}
		count, first = ne.Uint64(p[pageHeaderSize:]), pageHeaderSize+8
	}
	if count > (uint64(len(p))-first)/8 {
		return fmt.Errorf("free list: page %d claims %d ids", id, count)
	}
	previous := uint64(1)
	for i := range count {
		free := ne.Uint64(p[first+8*i:])
		if free <= previous || free >= w.hwm {
			return fmt.Errorf("free list: page %d frees page %d, outside the file or out of order", id, free)
		}
		previous = free
	}
	return nil
}
