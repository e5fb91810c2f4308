package boltstore

import "fmt"

// tree checks the B+tree rooted at page id: a bucket's pages (pagewalk.go).
func (w *pageWalk) tree(id uint64) error {
	if w.depth >= maxTreeDepth {
		return fmt.Errorf("page %d: more than %d levels of pages below the root", id, maxTreeDepth)
	}
	w.depth++
	defer func() { w.depth-- }()
	p, flags, err := w.page(id, "bucket")
	if err != nil {
		return err
	}
	switch flags {
	case branchPageFlag:
		return w.branch(id, p)
	case leafPageFlag:
		return w.leaf(fmt.Sprintf("page %d", id), p)
	}
	return fmt.Errorf("page %d: flags %#x, neither a branch nor a leaf page", id, flags)
}

// branch checks a branch page's keys and the pages beneath it. bbolt's
// cursor reads a branch's first element without counting, so an empty
// branch page is corrupt.
func (w *pageWalk) branch(id uint64, p []byte) error {
	count := uint64(ne.Uint16(p[10:]))
	if count == 0 || pageHeaderSize+count*branchElementSize > uint64(len(p)) {
		return fmt.Errorf("page %d: %d branch elements in %d bytes", id, count, len(p))
	}
	for i := range count {
		at := pageHeaderSize + i*branchElementSize
		pos, ksize := uint64(ne.Uint32(p[at:])), uint64(ne.Uint32(p[at+4:]))
		if at+pos+ksize > uint64(len(p)) {
			return fmt.Errorf("page %d: branch element %d's key runs past the page", id, i)
		}
		if err := w.tree(ne.Uint64(p[at+8:])); err != nil {
			return fmt.Errorf("under page %d: %w", id, err)
		}
	}
	return nil
}

// leaf checks a leaf page's keys and values, and the buckets its values
// hold. p starts at the page header: a page of the file, or the page an
// inline bucket keeps in its value.
func (w *pageWalk) leaf(where string, p []byte) error {
	count := uint64(ne.Uint16(p[10:]))
	if pageHeaderSize+count*leafElementSize > uint64(len(p)) {
		return fmt.Errorf("%s: %d leaf elements in %d bytes", where, count, len(p))
	}
	for i := range count {
		at := pageHeaderSize + i*leafElementSize
		flags := ne.Uint32(p[at:])
		pos, ksize, vsize := uint64(ne.Uint32(p[at+4:])), uint64(ne.Uint32(p[at+8:])), uint64(ne.Uint32(p[at+12:]))
		end := at + pos + ksize + vsize
		if end > uint64(len(p)) {
			return fmt.Errorf("%s: leaf element %d runs past the page", where, i)
		}
		if flags&bucketLeafFlag == 0 {
			continue
		}
		if err := w.bucket(fmt.Sprintf("%s element %d", where, i), p[end-vsize:end]); err != nil {
			return err
		}
	}
	return nil
}

// bucket checks a bucket entry's value: a header naming its root page, or,
// for an inline bucket (root 0), the header and its one leaf page.
func (w *pageWalk) bucket(where string, value []byte) error {
	if len(value) < bucketHeaderSize {
		return fmt.Errorf("%s: a bucket of %d bytes", where, len(value))
	}
	if root := ne.Uint64(value); root != 0 {
		return w.tree(root)
	}
	inline := value[bucketHeaderSize:]
	if len(inline) < pageHeaderSize {
		return fmt.Errorf("%s: an inline bucket of %d bytes", where, len(value))
	}
	if flags := ne.Uint16(inline[8:]); flags != leafPageFlag {
		return fmt.Errorf("%s: an inline bucket with flags %#x", where, flags)
	}
	return w.leaf(where+" (inline)", inline)
}
