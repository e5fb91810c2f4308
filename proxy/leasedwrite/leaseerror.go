package leasedwrite

// LeaseError is leaseError for proxy's own leased calls (RenameObject):
// one mapping of the lease store's failures to S3 answers.
func LeaseError(err error) error { return leaseError(err) }
