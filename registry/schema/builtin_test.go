package schema_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/registry/schema"
)

// builtinLayout is the wire layout of every message and enum of the
// embedded built-in files, as the public definitions have it: what
// Confluent's serializers and every generated class expect. A field is
// "name=number:kind" (message and enum fields name their type); a oneof
// member is prefixed by its oneof; an enum value is "NAME=number".
var builtinLayout = map[string]string{
	"google.type.Money":                 "currency_code=1:string units=2:int64 nanos=3:int32",
	"google.type.Date":                  "year=1:int32 month=2:int32 day=3:int32",
	"google.type.TimeOfDay":             "hours=1:int32 minutes=2:int32 seconds=3:int32 nanos=4:int32",
	"google.type.LatLng":                "latitude=1:double longitude=2:double",
	"google.type.Decimal":               "value=1:string",
	"google.type.Interval":              "start_time=1:google.protobuf.Timestamp end_time=2:google.protobuf.Timestamp",
	"google.type.Color":                 "red=1:float green=2:float blue=3:float alpha=4:google.protobuf.FloatValue",
	"google.type.PostalAddress":         "revision=1:int32 region_code=2:string language_code=3:string postal_code=4:string sorting_code=5:string administrative_area=6:string locality=7:string sublocality=8:string address_lines=9:repeated string recipients=10:repeated string organization=11:string",
	"google.type.PhoneNumber":           "kind.e164_number=1:string kind.short_code=2:google.type.PhoneNumber.ShortCode extension=3:string",
	"google.type.PhoneNumber.ShortCode": "region_code=1:string number=2:string",
	"google.type.Expr":                  "expression=1:string title=2:string description=3:string location=4:string",
	"google.type.DateTime":              "year=1:int32 month=2:int32 day=3:int32 hours=4:int32 minutes=5:int32 seconds=6:int32 nanos=7:int32 time_offset.utc_offset=8:google.protobuf.Duration time_offset.time_zone=9:google.type.TimeZone",
	"google.type.TimeZone":              "id=1:string version=2:string",
	"google.type.Fraction":              "numerator=1:int64 denominator=2:int64",
	"google.type.LocalizedText":         "text=1:string language_code=2:string",
	"google.type.Quaternion":            "x=1:double y=2:double z=3:double w=4:double",
	"google.type.DayOfWeek":             "DAY_OF_WEEK_UNSPECIFIED=0 MONDAY=1 TUESDAY=2 WEDNESDAY=3 THURSDAY=4 FRIDAY=5 SATURDAY=6 SUNDAY=7",
	"google.type.Month":                 "MONTH_UNSPECIFIED=0 JANUARY=1 FEBRUARY=2 MARCH=3 APRIL=4 MAY=5 JUNE=6 JULY=7 AUGUST=8 SEPTEMBER=9 OCTOBER=10 NOVEMBER=11 DECEMBER=12",
	"google.type.CalendarPeriod":        "CALENDAR_PERIOD_UNSPECIFIED=0 DAY=1 WEEK=2 FORTNIGHT=3 MONTH=4 QUARTER=5 HALF=6 YEAR=7",
	"confluent.Meta":                    "doc=1:string params=2:map<string,string> tags=3:repeated string",
	"confluent.type.Decimal":            "value=1:bytes precision=2:uint32 scale=3:int32",
}

// builtinExtensions are confluent/meta.proto's options.
var builtinExtensions = "google.protobuf.EnumOptions.confluent.enum_meta=1088 google.protobuf.EnumValueOptions.confluent.enum_value_meta=1088 " +
	"google.protobuf.FieldOptions.confluent.field_meta=1088 google.protobuf.FileOptions.confluent.file_meta=1088 google.protobuf.MessageOptions.confluent.message_meta=1088"

// TestBuiltinLayout: the embedded built-in files compile without
// references and define exactly the public layout.
func TestBuiltinLayout(t *testing.T) {
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\npackage probe;\n")
	paths := schema.Builtins()
	if len(paths) != 19 {
		t.Errorf("%d built-in files: %v", len(paths), paths)
	}
	for _, p := range paths {
		fmt.Fprintf(&b, "import %q;\n", p)
		if !schema.IsBuiltin(p) {
			t.Errorf("IsBuiltin(%q) is false", p)
		}
	}
	b.WriteString("message Probe { string s = 1; }\n")
	p, err := schema.Parse(context.Background(), "probe.proto", b.String(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var exts []string
	imps := p.Set.Files[0].Desc.Imports()
	for i := 0; i < imps.Len(); i++ {
		fd := imps.Get(i).FileDescriptor
		layout(fd.Messages(), fd.Enums(), got)
		xs := fd.Extensions()
		for j := 0; j < xs.Len(); j++ {
			x := xs.Get(j)
			exts = append(exts, fmt.Sprintf("%s.%s=%d", x.ContainingMessage().FullName(), x.FullName(), x.Number()))
		}
	}
	for name, want := range builtinLayout {
		if got[name] != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got[name], want)
		}
	}
	for name := range got {
		if _, ok := builtinLayout[name]; !ok && !strings.HasSuffix(name, "Entry") {
			t.Errorf("%s is not in the public layout", name)
		}
	}
	sort.Strings(exts)
	if s := strings.Join(exts, " "); s != builtinExtensions {
		t.Errorf("extensions:\n got %s\nwant %s", s, builtinExtensions)
	}
}

func layout(ms protoreflect.MessageDescriptors, es protoreflect.EnumDescriptors, out map[string]string) {
	for i := 0; i < es.Len(); i++ {
		e := es.Get(i)
		var parts []string
		for j := 0; j < e.Values().Len(); j++ {
			v := e.Values().Get(j)
			parts = append(parts, fmt.Sprintf("%s=%d", v.Name(), v.Number()))
		}
		out[string(e.FullName())] = strings.Join(parts, " ")
	}
	for i := 0; i < ms.Len(); i++ {
		m := ms.Get(i)
		var parts []string
		for j := 0; j < m.Fields().Len(); j++ {
			f := m.Fields().Get(j)
			prefix := ""
			if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
				prefix = string(o.Name()) + "."
			}
			parts = append(parts, fmt.Sprintf("%s%s=%d:%s", prefix, f.Name(), f.Number(), kind(f)))
		}
		out[string(m.FullName())] = strings.Join(parts, " ")
		layout(m.Messages(), m.Enums(), out)
	}
}

func kind(f protoreflect.FieldDescriptor) string {
	if f.IsMap() {
		return "map<" + kind(f.MapKey()) + "," + kind(f.MapValue()) + ">"
	}
	k := f.Kind().String()
	switch f.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		k = string(f.Message().FullName())
	case protoreflect.EnumKind:
		k = string(f.Enum().FullName())
	}
	if f.IsList() {
		return "repeated " + k
	}
	return k
}
