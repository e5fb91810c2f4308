package s3xml

import "github.com/s3cond/s3cond/s3err"

// EntryError is the <Error> of one DeleteObjects entry that was not deleted.
func EntryError(o ObjectIdentifier, err error) DeleteError {
	e := s3err.As(err)
	return DeleteError{Key: o.Key, VersionID: o.VersionID, Code: string(e.Code), Message: e.Message}
}
