package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
)

var (
	durationType  = reflect.TypeOf(time.Duration(0))
	stringsType   = reflect.TypeOf([]string(nil))
	stringMapType = reflect.TypeOf(map[string]string(nil))
)

// setScalar parses text into a leaf of the config (string, duration,
// whole number or number). The YAML decoder and the environment overrides share it so a value
// means the same thing wherever it is written.
func setScalar(v reflect.Value, text string) error {
	switch {
	case v.Type() == durationType:
		d, err := time.ParseDuration(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not a duration (write it like 100ms, 20s or 1h)", text)
		}
		v.SetInt(int64(d))
	case v.Kind() == reflect.String:
		v.SetString(text)
	case v.Kind() == reflect.Int:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 0)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", text)
		}
		v.SetInt(n)
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not true or false", text)
		}
		v.SetBool(b)
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%q is not a number", text)
		}
		v.SetFloat(f)
	default:
		// Only reachable if a field of an unsupported type is added to Config;
		// TestEveryLeafHasASupportedType keeps that from shipping.
		return fmt.Errorf("unsupported config type %s", v.Type())
	}
	return nil
}

// isLeaf reports whether t is a single value as far as keys go: scalars,
// lists of strings and the bucket mapping.
func isLeaf(t reflect.Type) bool {
	switch {
	case t == durationType, t == stringsType, t == stringMapType:
		return true
	case t.Kind() == reflect.String, t.Kind() == reflect.Float64, t.Kind() == reflect.Int, t.Kind() == reflect.Bool:
		return true
	}
	return false
}

// yamlName is the key a struct field is written as.
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}
