"""What kube-apiserver's decoder and validators say, for the stand-in (tests/kube/apiserver.py).

Pure functions, Python standard library only:
  - Go's time.Parse for the two timestamp formats of the API: metav1.Time (RFC 3339, seconds;
    a fraction is accepted and dropped) and metav1.MicroTime (exactly six fraction digits), with
    Go's own error text, and the UTC form the server stores and returns;
  - field.Error as k8s.io/apimachinery/pkg/util/validation/field formats it (the causes and the
    message of an `Invalid` Status);
  - the name rules (DNS-1123 subdomain, qualified name) with upstream's messages.
"""

import calendar
import json
import re
import time

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"

# (layout element, kind): digits N = exactly N digits; "hour" = 1 or 2 digits (Go's stdHour)
_ELEMENTS = [("2006", "year"), ("-", "lit"), ("01", "month"), ("-", "lit"), ("02", "day"),
             ("T", "lit"), ("15", "hour"), (":", "lit"), ("04", "minute"), (":", "lit"),
             ("05", "second")]


class TimeError(ValueError):
    """Go's *time.ParseError, with its Error() text."""


def _perr(value, layout, value_elem, layout_elem, message=""):
    q = json.dumps
    if message:
        return TimeError("parsing time " + q(value) + message)
    return TimeError("parsing time %s as %s: cannot parse %s as %s" % (
        q(value), q(layout), q(value_elem), q(layout_elem)))


def parse_time(value, micro):
    """Seconds since the epoch (float) and the stored text of a metav1.Time (micro=False) or
    metav1.MicroTime (micro=True) as kube-apiserver decodes it; raises TimeError otherwise."""
    layout = RFC3339_MICRO if micro else RFC3339
    if not isinstance(value, str):
        raise TimeError("json: cannot unmarshal %s into Go value of type string" %
                        ("number" if isinstance(value, (int, float)) else type(value).__name__))
    rest, f = value, {}
    for elem, kind in _ELEMENTS:
        if kind == "lit":
            if not rest.startswith(elem):
                raise _perr(value, layout, rest, elem)
            rest = rest[len(elem):]
            continue
        if kind == "year":
            m = re.match(r"[0-9]{4}", rest)
        elif kind == "hour":
            m = re.match(r"[0-9]{1,2}", rest)
        else:
            m = re.match(r"[0-9]{2}", rest)
        if not m:
            raise _perr(value, layout, rest, elem)
        f[kind] = int(m.group(0))
        rest = rest[m.end():]
        limit = {"month": (1, 12), "day": (1, 31), "hour": (0, 23), "minute": (0, 59),
                 "second": (0, 59)}.get(kind)
        if limit and not limit[0] <= f[kind] <= limit[1]:
            raise _perr(value, layout, "", "", ": %s out of range" % kind)
    usec = 0
    if micro:
        # stdFracSecond0: exactly the layout's number of digits
        if len(rest) < 7 or rest[0] not in ".," or not rest[1:7].isdigit():
            raise _perr(value, layout, rest, ".000000")
        usec, rest = int(rest[1:7]), rest[7:]
    else:
        # a fraction after the seconds is accepted even though the layout has none (and dropped:
        # metav1.Time is marshalled in whole seconds)
        m = re.match(r"[.,]([0-9]+)", rest)
        if m:
            rest = rest[m.end():]
    if rest.startswith("Z"):
        offset, rest = 0, rest[1:]
    else:
        m = re.match(r"([+-])([0-9]{2}):([0-9]{2})", rest)
        if not m:
            raise _perr(value, layout, rest, "Z07:00")
        offset = (int(m.group(2)) * 3600 + int(m.group(3)) * 60) * (1 if m.group(1) == "+" else -1)
        rest = rest[m.end():]
    if rest:
        raise _perr(value, layout, "", "", ": extra text: " + json.dumps(rest))
    if f["day"] > calendar.monthrange(f["year"], f["month"])[1]:
        raise _perr(value, layout, "", "", ": day out of range")
    secs = calendar.timegm((f["year"], f["month"], f["day"], f["hour"], f["minute"],
                            f["second"])) - offset
    return secs + usec / 1e6, format_time(secs, usec if micro else None)


def format_time(secs, usec=None):
    """The JSON text of a time as the server writes it: UTC with 'Z'; a MicroTime (usec given)
    with six fraction digits."""
    base = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(secs)))
    return base + ("Z" if usec is None else ".%06dZ" % usec)


def now_micro():
    """The current time as a MicroTime's text."""
    t = time.time()
    return format_time(int(t), int((t - int(t)) * 1e6))


# ---- field.Error -------------------------------------------------------------------------------

def _go_value(v):
    """How field.Error prints a bad value: %v for numbers and bools, %q for strings."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    return json.dumps(v, sort_keys=True)


def required(field, detail=""):
    return {"type": "FieldValueRequired", "field": field,
            "body": "Required value" + (": " + detail if detail else "")}


def invalid(field, value, detail="", raw_value=None):
    """raw_value: the text to print instead of value (Go's %#v of a type with no simple form,
    e.g. "0x0" for a uint64)."""
    shown = raw_value if raw_value is not None else _go_value(value)
    return {"type": "FieldValueInvalid", "field": field,
            "body": "Invalid value: " + shown + (": " + detail if detail else "")}


def not_supported(field, value, supported):
    return {"type": "FieldValueNotSupported", "field": field,
            "body": "Unsupported value: %s: supported values: %s" % (
                _go_value(value), ", ".join(json.dumps(x) for x in supported))}


def aggregate(errs):
    """utilerrors.NewAggregate(errs).Error(): one error alone, several in brackets."""
    msgs = ["%s: %s" % (e["field"], e["body"]) for e in errs]
    return msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"


def causes(errs):
    return [{"reason": e["type"], "message": e["body"], "field": e["field"]} for e in errs]


# ---- names -------------------------------------------------------------------------------------

_DNS1123_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_QUALIFIED_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"


def regex_error(msg, regex, examples):
    """validation.RegexError: the message, its examples (joined as Go joins them, with two
    spaces before "or") and the regular expression."""
    return msg + " (e.g. " + " or ".join("'%s', " % e for e in examples) + \
        "regex used for validation is '%s')" % regex


_QUALIFIED_NAME_ERROR = regex_error("must consist of alphanumeric characters, '-', '_' or '.', "
                                    "and must start and end with an alphanumeric character",
                                    _QUALIFIED_NAME, ["MyName", "my.name", "123-abc"])


def dns1123_subdomain(name):
    """validation.IsDNS1123Subdomain: the messages (none when valid)."""
    out = []
    if len(name) > 253:
        out.append("must be no more than 253 characters")
    if not re.fullmatch(_DNS1123_SUBDOMAIN, name):
        out.append(regex_error("a lowercase RFC 1123 subdomain must consist of lower case "
                               "alphanumeric characters, '-' or '.', and must start and end with "
                               "an alphanumeric character", _DNS1123_SUBDOMAIN, ["example.com"]))
    return out


def qualified_name(value):
    """validation.IsQualifiedName: [prefix/]name, name ≤ 63 characters."""
    out = []
    parts = value.split("/")
    if len(parts) == 2:
        prefix, name = parts
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            out += ["prefix part " + m for m in dns1123_subdomain(prefix)]
    elif len(parts) == 1:
        name = parts[0]
    else:
        return ["a qualified name " + _QUALIFIED_NAME_ERROR + " with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > 63:
        out.append("name part must be no more than 63 characters")
    if not re.fullmatch(_QUALIFIED_NAME, name):
        out.append("name part " + _QUALIFIED_NAME_ERROR)
    return out
