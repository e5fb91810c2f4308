package testservers

import "net/http"

// RareRaceRounds is how often NewRarelyRacyDeleteStore loses its race: one
// round in 40, SeaweedFS 4.53's rate for CopyObject against PutObject (1 of
// 40) and rarer than versitygw v1.8.0's DeleteObject If-Match against one
// PutObject If-Match (11 of 300, 1 in 27).
const RareRaceRounds = 40

// NewRarelyRacyDeleteStore stands for versitygw v1.8.0's DeleteObject
// If-Match, whose check and removal are not atomic with a PutObject If-Match
// of the same version, lost at the rate a real store loses it by chance
// (RareRaceRounds) but deterministically: the probe's race of DeleteObject
// If-Match against PutObject If-Match is lost on its 40th round (and 80th...),
// atomic on every other; every other condition is atomic. A probe that
// races fewer rounds calls it native; one that races enough calls
// delete_if_match racy, every time.
func NewRarelyRacyDeleteStore(inner http.Handler) http.Handler {
	return &conditionalStore{inner: inner, keys: map[string]*keyHistory{}, racy: opDelete,
		forced: []string{"/race-delete-cas-vs-put-cas-"}, rarely: RareRaceRounds,
		raceRounds: map[string]int{}, keyRound: map[string]int{}}
}

// rareRound numbers key among the keys of the forced race f (the probe
// races one round at a time per race, so in round order) and says whether
// its round is one the store loses.
func (s *conditionalStore) rareRound(key, f string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.keyRound[key]
	if !ok {
		s.raceRounds[f]++
		n = s.raceRounds[f]
		s.keyRound[key] = n
	}
	return n%s.rarely == 0
}
