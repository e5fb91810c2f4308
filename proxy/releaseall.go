package proxy

import (
	"context"

	"github.com/s3cond/s3cond/dynamolease"
)

// releaseAllInBackground is releaseInBackground for the leases of one
// write, released together: a DeleteObjects' hundreds of leases in a few
// lease store calls (dynamolease.Committer.ReleaseAllNotAwaited), not one
// each.
func (p *Proxy) releaseAllInBackground(leases []*dynamolease.Lease) {
	switch len(leases) {
	case 0:
		return
	case 1:
		p.releaseInBackground(leases[0])
		return
	}
	p.releases.start()
	go func() {
		defer p.releases.done()
		ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		for i, err := range p.leases.ReleaseAllNotAwaited(ctx, leases) {
			if err != nil {
				p.log.Warn().Err(err).Str("path", leases[i].Path()).Uint64("generation", leases[i].Generation()).
					Msg("could not mark lease released; it expires after its timeout")
			}
		}
	}()
}
