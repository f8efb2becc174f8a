/*
 * Optional C accelerator for agentlog.values.snapshot (spec/core.md §1).
 *
 * snapshot(value) validates a value against the lossless JSON domain and returns a deep copy
 * built from FrozenDict / FrozenList, exactly like the pure-Python fast path in _snapshot.py.
 * It never diagnoses: whenever the value is not plainly valid (a rejected type, an integer
 * outside +-(2**53-1), a non-finite float or -0.0, a non-str key, nesting deeper than
 * MAX_DEPTH, which also catches cycles) it raises Fallback, and the Python side redoes the
 * work with its diagnosing walker. So both implementations accept exactly the same values.
 *
 * Containers are created through dict/list tp_new and filled with the C-level
 * PyDict_SetItem / PyList_Append, which bypass the Python-level mutators that FrozenDict and
 * FrozenList override to raise.
 *
 * share_strings(value) serves the stores' readers: a parser makes a new str for every "text",
 * "assistant" or model name of a log, so a loaded session would hold tens of thousands of equal
 * copies. Called on each record right after parsing (so the parser's next record reuses the
 * freed memory), it replaces every short string value by the equal one a small two-way
 * set-associative table holds, if any. The table is bounded (unique strings such as ids only
 * evict each other) and holds immutable str objects only, so sharing is invisible to callers.
 *
 * Every frozen container this module finishes is taken out of the cyclic garbage collector's
 * lists (PyObject_GC_UnTrack): it is immutable, and it holds only scalars and frozen
 * containers built before it, so it can never be part of a reference cycle, and a collection
 * has nothing to find in it. A long session's log then costs the collector nothing, instead of
 * a walk of every event at each full collection. Reference counting still frees every frozen
 * value the moment the last reference goes. (Code that mutates one anyway through the C-level
 * dict/list methods could build a cycle the collector would no longer see; the Python-level
 * mutators raise.)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <structmember.h>

#define MAX_DEPTH 200
#define MAX_SAFE_INTEGER 9007199254740991LL

#define SHARED_MAX_LENGTH 32
#define SHARED_SLOTS 4096 /* a power of two: 2048 sets of two */

static PyObject *FrozenDictType = NULL;
static PyObject *FrozenListType = NULL;
static PyObject *Fallback = NULL;
static PyObject *EmptyTuple = NULL;
static PyObject *EnvelopeKeys[7]; /* type, seq, time, data, surfaceOp, sourceEventSeqs, ignorable */
static PyObject *Shared[SHARED_SLOTS];

static int
same_text(PyObject *held, PyObject *text, Py_ssize_t length)
{
    return held != NULL && PyUnicode_GET_LENGTH(held) == length &&
           PyUnicode_KIND(held) == PyUnicode_KIND(text) &&
           memcmp(PyUnicode_DATA(held), PyUnicode_DATA(text),
                  (size_t)length * PyUnicode_KIND(text)) == 0;
}

/* The shared object equal to the str `text` (a borrowed reference): the table's, or `text`
 * itself, which then takes its set's most recent slot. Each hash selects a set of two slots
 * kept in least-recently-used order, so two recurring values that collide both stay shared,
 * and a recurring value survives one-off values (ids) passing through its set. NULL only if
 * hashing failed (it cannot for an exact str). */
static PyObject *
shared_string(PyObject *text)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (length > SHARED_MAX_LENGTH) {
        return text;
    }
    Py_hash_t hash = PyObject_Hash(text);
    if (hash == -1) {
        return NULL;
    }
    PyObject **set = &Shared[(size_t)hash & (SHARED_SLOTS - 2)];
    if (set[0] == text || same_text(set[0], text, length)) {
        return set[0];
    }
    if (set[1] == text || same_text(set[1], text, length)) {
        PyObject *held = set[1]; /* now the most recent: a one-off value evicts the other */
        set[1] = set[0];
        set[0] = held;
        return held;
    }
    Py_INCREF(text);
    Py_XDECREF(set[1]);
    set[1] = set[0];
    set[0] = text;
    return text;
}

static PyObject *
fallback(void)
{
    PyErr_SetNone(Fallback);
    return NULL;
}

static PyObject *snap(PyObject *value, int depth);

/* The walk copies a container whole first (a plain dict's key table is cloned in one step by
 * PyDict_Merge into an empty dict; a list's items in one slice assignment), then puts the frozen
 * copy of each nested container in place of the original: the copies of scalars, which are most
 * values, cost no insertion and no resize. */
static PyObject *
snap_dict(PyObject *value, int depth)
{
    PyObject *out = PyDict_Type.tp_new((PyTypeObject *)FrozenDictType, EmptyTuple, NULL);
    if (out == NULL) {
        return NULL;
    }
    if (PyDict_Merge(out, value, 1) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        if (!PyUnicode_CheckExact(key)) {
            Py_DECREF(out);
            return fallback();
        }
        PyObject *copy = snap(item, depth + 1);
        if (copy == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        int failed = copy == item ? 0 : PyDict_SetItem(out, key, copy);
        Py_DECREF(copy);
        if (failed) {
            Py_DECREF(out);
            return NULL;
        }
    }
    PyObject_GC_UnTrack(out); /* filled: from now on immutable and acyclic */
    return out;
}

static PyObject *
snap_list(PyObject *value, int depth)
{
    PyObject *out = PyList_Type.tp_new((PyTypeObject *)FrozenListType, EmptyTuple, NULL);
    if (out == NULL) {
        return NULL;
    }
    /* No Python code runs during the walk, so the source list cannot change under us. */
    Py_ssize_t size = PyList_GET_SIZE(value);
    if (PyList_SetSlice(out, 0, 0, value) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *item = PyList_GET_ITEM(value, i);
        PyObject *copy = snap(item, depth + 1);
        if (copy == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        if (copy == item) {
            Py_DECREF(copy);
        }
        else {
            PyList_SET_ITEM(out, i, copy); /* takes the new reference */
            Py_DECREF(item);               /* the slice's reference to the original */
        }
    }
    PyObject_GC_UnTrack(out);
    return out;
}

static PyObject *
snap(PyObject *value, int depth)
{
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyUnicode_Type || type == &PyBool_Type || value == Py_None) {
        Py_INCREF(value);
        return value;
    }
    if (type == &PyLong_Type) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (number == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (overflow || number > MAX_SAFE_INTEGER || number < -MAX_SAFE_INTEGER) {
            return fallback();
        }
        Py_INCREF(value);
        return value;
    }
    if (type == &PyFloat_Type) {
        double number = PyFloat_AS_DOUBLE(value);
        if (!isfinite(number) || (number == 0.0 && signbit(number))) {
            return fallback();
        }
        Py_INCREF(value);
        return value;
    }
    if (depth > MAX_DEPTH) {
        return fallback();
    }
    if (type == &PyDict_Type) {
        return snap_dict(value, depth);
    }
    if (type == &PyList_Type) {
        return snap_list(value, depth);
    }
    if (PyObject_TypeCheck(value, (PyTypeObject *)FrozenDictType) ||
        PyObject_TypeCheck(value, (PyTypeObject *)FrozenListType)) {
        Py_INCREF(value);
        return value;
    }
    return fallback();
}

static int
share(PyObject *value, int depth)
{
    if (depth > MAX_DEPTH) {
        return 0; /* a cycle or absurd nesting: leave it to the validating walkers */
    }
    if (PyDict_CheckExact(value)) {
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &pos, &key, &item)) {
            if (PyUnicode_CheckExact(item)) {
                PyObject *shared = shared_string(item);
                /* Replacing the value of an existing key keeps the iteration valid. */
                if (shared == NULL || (shared != item && PyDict_SetItem(value, key, shared) < 0)) {
                    return -1;
                }
            }
            else if (share(item, depth + 1) < 0) {
                return -1;
            }
        }
    }
    else if (PyList_CheckExact(value)) {
        Py_ssize_t size = PyList_GET_SIZE(value);
        for (Py_ssize_t i = 0; i < size; i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            if (PyUnicode_CheckExact(item)) {
                PyObject *shared = shared_string(item);
                if (shared == NULL) {
                    return -1;
                }
                if (shared != item) {
                    Py_INCREF(shared);
                    PyList_SET_ITEM(value, i, shared);
                    Py_DECREF(item);
                }
            }
            else if (share(item, depth + 1) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

static PyObject *
speedups_share_strings(PyObject *module, PyObject *value)
{
    if (share(value, 0) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

/*
 * freeze_in_place(value): validate like snapshot, but turn the value's own dicts and lists into
 * FrozenDict / FrozenList by changing their type (post-order: a container is retyped only after
 * its whole subtree validated). Only for values nobody else holds, fresh from a JSON parser:
 * it avoids the copy. FrozenDict/FrozenList add no fields (__slots__ = ()), so a dict and a
 * FrozenDict have the same layout; the heap type gains the reference its instances hold.
 * On Fallback, what was already retyped is valid and frozen; the rest is untouched.
 */
static int freeze(PyObject *value, int depth);

static int
freeze_container(PyObject *value, PyObject *target, int depth)
{
    if (depth > MAX_DEPTH) {
        fallback();
        return -1;
    }
    /* Short string values are shared on the way, as share_strings does (one walk for both). */
    if (Py_TYPE(value) == &PyDict_Type) {
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &pos, &key, &item)) {
            if (!PyUnicode_CheckExact(key)) {
                fallback();
                return -1;
            }
            if (PyUnicode_CheckExact(item)) {
                PyObject *shared = shared_string(item);
                /* Replacing the value of an existing key keeps the iteration valid. */
                if (shared == NULL || (shared != item && PyDict_SetItem(value, key, shared) < 0)) {
                    return -1;
                }
            }
            else if (freeze(item, depth + 1) < 0) {
                return -1;
            }
        }
    }
    else {
        Py_ssize_t size = PyList_GET_SIZE(value);
        for (Py_ssize_t i = 0; i < size; i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            if (PyUnicode_CheckExact(item)) {
                PyObject *shared = shared_string(item);
                if (shared == NULL) {
                    return -1;
                }
                if (shared != item) {
                    Py_INCREF(shared);
                    PyList_SET_ITEM(value, i, shared);
                    Py_DECREF(item);
                }
            }
            else if (freeze(item, depth + 1) < 0) {
                return -1;
            }
        }
    }
    Py_INCREF(target);
    Py_SET_TYPE(value, (PyTypeObject *)target);
    PyObject_GC_UnTrack(value);
    return 0;
}

static int
freeze(PyObject *value, int depth)
{
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyUnicode_Type || type == &PyBool_Type || value == Py_None) {
        return 0;
    }
    if (type == &PyLong_Type) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (number == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (overflow || number > MAX_SAFE_INTEGER || number < -MAX_SAFE_INTEGER) {
            fallback();
            return -1;
        }
        return 0;
    }
    if (type == &PyFloat_Type) {
        double number = PyFloat_AS_DOUBLE(value);
        if (!isfinite(number) || (number == 0.0 && signbit(number))) {
            fallback();
            return -1;
        }
        return 0;
    }
    if (type == &PyDict_Type) {
        return freeze_container(value, FrozenDictType, depth);
    }
    if (type == &PyList_Type) {
        return freeze_container(value, FrozenListType, depth);
    }
    if (PyObject_TypeCheck(value, (PyTypeObject *)FrozenDictType) ||
        PyObject_TypeCheck(value, (PyTypeObject *)FrozenListType)) {
        return 0;
    }
    fallback();
    return -1;
}

static PyObject *
speedups_freeze_in_place(PyObject *module, PyObject *value)
{
    if (FrozenDictType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "agentlog._speedups.configure() was not called");
        return NULL;
    }
    if (freeze(value, 0) < 0) {
        return NULL;
    }
    Py_INCREF(value);
    return value;
}

/* retype(frozen_dict, subtype): make an exact FrozenDict an instance of a FrozenDict subclass
 * with the same layout (an Event), in place. */
static PyObject *
speedups_retype(PyObject *module, PyObject *args)
{
    PyObject *value, *target;
    if (!PyArg_ParseTuple(args, "OO!", &value, &PyType_Type, &target)) {
        return NULL;
    }
    PyTypeObject *subtype = (PyTypeObject *)target;
    if (Py_TYPE(value) != (PyTypeObject *)FrozenDictType ||
        !PyType_IsSubtype(subtype, (PyTypeObject *)FrozenDictType) ||
        subtype->tp_basicsize != Py_TYPE(value)->tp_basicsize ||
        subtype->tp_dictoffset != 0 || subtype->tp_weaklistoffset != 0) {
        PyErr_SetString(PyExc_TypeError, "retype() needs an exact FrozenDict and a slotless subtype");
        return NULL;
    }
    Py_INCREF(target);
    PyTypeObject *old = Py_TYPE(value);
    Py_SET_TYPE(value, subtype);
    Py_DECREF(old);
    PyObject_GC_UnTrack(value);
    Py_INCREF(value);
    return value;
}

/* untrack(value): take a frozen container (an Event too) out of the collector's lists. */
static PyObject *
speedups_untrack(PyObject *module, PyObject *value)
{
    if (FrozenDictType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "agentlog._speedups.configure() was not called");
        return NULL;
    }
    if (!PyObject_TypeCheck(value, (PyTypeObject *)FrozenDictType) &&
        !PyObject_TypeCheck(value, (PyTypeObject *)FrozenListType)) {
        PyErr_SetString(PyExc_TypeError, "untrack() takes a FrozenDict or a FrozenList");
        return NULL;
    }
    PyObject_GC_UnTrack(value);
    Py_INCREF(value);
    return value;
}

/*
 * new_event_record(subtype, type, seq, time, data, sources, op, ignorable): an appended event
 * built in one call from validated, frozen parts: a `subtype` (a slotless FrozenDict subclass,
 * the Event) holding type, seq, time, data, then sourceEventSeqs and surfaceOp unless None,
 * then ignorable: true when `ignorable` is true, in that key order, untracked by the collector
 * (as untrack() does). The append pipeline's one event construction per append.
 */
static PyObject *
speedups_new_event_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "new_event_record() takes exactly 8 arguments");
        return NULL;
    }
    PyObject *target = args[0];
    if (FrozenDictType == NULL || !PyType_Check(target) ||
        !PyType_IsSubtype((PyTypeObject *)target, (PyTypeObject *)FrozenDictType) ||
        ((PyTypeObject *)target)->tp_basicsize != ((PyTypeObject *)FrozenDictType)->tp_basicsize) {
        PyErr_SetString(PyExc_TypeError, "new_event_record() needs a slotless FrozenDict subtype");
        return NULL;
    }
    PyObject *event = PyDict_Type.tp_new((PyTypeObject *)target, EmptyTuple, NULL);
    if (event == NULL) {
        return NULL;
    }
    /* EnvelopeKeys: type, seq, time, data, surfaceOp, sourceEventSeqs, ignorable. */
    if (PyDict_SetItem(event, EnvelopeKeys[0], args[1]) < 0 ||
        PyDict_SetItem(event, EnvelopeKeys[1], args[2]) < 0 ||
        PyDict_SetItem(event, EnvelopeKeys[2], args[3]) < 0 ||
        PyDict_SetItem(event, EnvelopeKeys[3], args[4]) < 0 ||
        (args[5] != Py_None && PyDict_SetItem(event, EnvelopeKeys[5], args[5]) < 0) ||
        (args[6] != Py_None && PyDict_SetItem(event, EnvelopeKeys[4], args[6]) < 0)) {
        Py_DECREF(event);
        return NULL;
    }
    int ignorable = PyObject_IsTrue(args[7]);
    if (ignorable < 0 || (ignorable && PyDict_SetItem(event, EnvelopeKeys[6], Py_True) < 0)) {
        Py_DECREF(event);
        return NULL;
    }
    PyObject_GC_UnTrack(event);
    return event;
}

/*
 * settle_event_record(record, event_type, rule_types): the stores' readers' one call per fresh
 * record of a current-format log. It checks the event envelope (spec/core.md §2.1: only
 * envelope keys; a str type; a seq that is an int in 0..2**53-1; a time that is an int within
 * +-(2**53-1); data present; ignorable absent or true; sourceEventSeqs, if present, a list of
 * plain ints), interns the type, and freezes the record in place as freeze_in_place does (short
 * strings shared on the way). Then the per-type data rules (spec/core.md §4 step 7, §9.1
 * step 4): a type outside rule_types has none; a message type is accepted here when its data is
 * plainly valid (message_rules_hold below). The record comes back as an event_type instance
 * when every check passed, as a FrozenDict when rules remain for the Python checks (which name
 * the rule), and None for anything the general path must read or diagnose (range-encoded
 * citations, a bad envelope, a value outside the domain); what was frozen by then stays frozen
 * and valid. (None rather than Fallback: a reader calls this for every record, and raising
 * costs more than the call.)
 */
static PyObject *MessageTypes[5]; /* user, assistant, tool, system, developer */
static PyObject *Keys[19];

enum {
    K_MESSAGE, K_ROLE, K_CONTENT, K_TYPE, K_ERROR, K_IS_ERROR, K_TURN, K_STEP, K_STREAM, K_ID,
    K_SOURCE, K_KIND, K_PROVIDER, K_MODEL, K_CALL_ID, K_TOOL_CALL_ID, K_TOOL_ADDITION,
    K_TOOL_REMOVAL, K_SYSTEM_PROMPT
};
static const char *KeyNames[19] = {
    "message", "role", "content", "type", "error", "isError", "turn", "step", "stream", "id",
    "source", "kind", "provider", "model", "callId", "toolCallId", "tool-addition",
    "tool-removal", "system-prompt",
};
static const char *Roles[5] = {"user", "assistant", "tool", "system", "developer"};
static PyObject *RoleNames[5];

static int
safe_int(PyObject *value, long long low)
{
    if (Py_TYPE(value) != &PyLong_Type) {
        return 0;
    }
    int overflow = 0;
    long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (number == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return !overflow && number >= low && number <= MAX_SAFE_INTEGER;
}

/* A borrowed item of a dict, NULL when absent or when `dict` is no dict (never an error). */
static PyObject *
get(PyObject *dict, int key)
{
    if (dict == NULL || !PyDict_Check(dict)) {
        return NULL;
    }
    PyObject *item = PyDict_GetItemWithError(dict, Keys[key]);
    if (item == NULL) {
        PyErr_Clear();
    }
    return item;
}

static int
nonempty_str(PyObject *value)
{
    return value != NULL && PyUnicode_CheckExact(value) && PyUnicode_GET_LENGTH(value) > 0;
}

static int
is_text(PyObject *value, PyObject *text)
{
    return value != NULL && PyUnicode_CheckExact(value) &&
           (value == text || PyUnicode_Compare(value, text) == 0);
}

/*
 * Whether the data of a message event (kind 0-3: user, assistant, tool result, system) is
 * plainly valid under rules.py's _check_message_event with its shape checks: 1 means those
 * checks all pass; 0 means "let them decide" (they name the broken rule, or accept what this
 * stricter test leaves to them, such as an integral float turn). Developer messages, with
 * their tool-change rules, are always left to them.
 */
static int
message_rules_hold(int kind, PyObject *data)
{
    if (!PyDict_Check(data)) {
        return 0;
    }
    PyObject *message = kind == 0 ? data : get(data, K_MESSAGE);
    PyObject *content = get(message, K_CONTENT);
    if (content == NULL || !PyList_Check(content)) {
        return 0; /* also when there is no message object */
    }
    Py_ssize_t size = PyList_GET_SIZE(content);
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *block_type = get(PyList_GET_ITEM(content, i), K_TYPE);
        if (is_text(block_type, Keys[K_TOOL_ADDITION]) ||
            is_text(block_type, Keys[K_TOOL_REMOVAL])) {
            return 0; /* tool-change blocks require developer role */
        }
    }
    if (kind == 2 && get(data, K_ERROR) != NULL && get(message, K_IS_ERROR) != Py_True) {
        return 0;
    }
    if (kind == 1) { /* settlement fields */
        PyObject *turn = get(data, K_TURN), *step = get(data, K_STEP);
        PyObject *stream = get(data, K_STREAM);
        if (turn == NULL || !safe_int(turn, 0) || step == NULL || !safe_int(step, 0) ||
            stream == NULL || !PyList_Check(stream)) {
            return 0;
        }
    }
    if (!nonempty_str(get(message, K_ID)) || !is_text(get(message, K_ROLE), RoleNames[kind])) {
        return 0;
    }
    PyObject *source = get(message, K_SOURCE);
    PyObject *source_kind = get(source, K_KIND);
    if (!nonempty_str(source_kind)) {
        return 0;
    }
    switch (kind) {
    case 0:
        return 1;
    case 1:
        return is_text(source_kind, Keys[K_MODEL]) && nonempty_str(get(source, K_PROVIDER)) &&
               nonempty_str(get(source, K_MODEL));
    case 2: {
        PyObject *call_id = get(source, K_CALL_ID);
        return is_text(source_kind, RoleNames[2]) && nonempty_str(call_id) &&
               is_text(get(message, K_TOOL_CALL_ID), call_id);
    }
    default:
        return is_text(source_kind, Keys[K_SYSTEM_PROMPT]);
    }
}

/* The message kind (0-3) of an event type, or -1 for any other type. */
static int
message_kind(PyObject *event_type)
{
    for (int kind = 0; kind < 4; kind++) {
        if (event_type == MessageTypes[kind]) {
            return kind;
        }
    }
    if (!PyUnicode_CheckExact(event_type) || PyUnicode_CHECK_INTERNED(event_type)) {
        return -1; /* an interned type that is none of them, or not a str at all */
    }
    for (int kind = 0; kind < 4; kind++) {
        if (PyUnicode_Compare(event_type, MessageTypes[kind]) == 0) {
            return kind;
        }
    }
    return -1;
}

/* message_rules_hold(event_type, data): True when the data of a message event is plainly
 * valid under the per-type rules (so the Python rules would pass it); False means "run them". */
static PyObject *
speedups_message_rules_hold(PyObject *module, PyObject *args)
{
    PyObject *event_type, *data;
    if (!PyArg_ParseTuple(args, "OO", &event_type, &data)) {
        return NULL;
    }
    int kind = message_kind(event_type);
    return PyBool_FromLong(kind >= 0 && message_rules_hold(kind, data));
}

/* Which envelope key `key` is (its index in EnvelopeKeys), or -1: by identity first (parsers
 * reuse their key objects), else by length and text; envelope keys are ASCII. */
static int
envelope_index(PyObject *key)
{
    for (int i = 0; i < 7; i++) {
        if (key == EnvelopeKeys[i]) {
            return i;
        }
    }
    if (!PyUnicode_CheckExact(key) || !PyUnicode_IS_COMPACT_ASCII(key)) {
        return -1;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(key);
    const char *text = (const char *)PyUnicode_DATA(key);
    for (int i = 0; i < 7; i++) {
        if (PyUnicode_GET_LENGTH(EnvelopeKeys[i]) == length &&
            memcmp(PyUnicode_DATA(EnvelopeKeys[i]), text, (size_t)length) == 0) {
            return i;
        }
    }
    return -1;
}

/* The interned string equal to a fresh str `text` (a new reference). A log has a few dozen
 * event types: a small table of the interned ones answers without hashing. */
#define TYPE_SLOTS 64
static PyObject *InternedTypes[TYPE_SLOTS];
static int NextTypeSlot = 0;

static PyObject *
interned_type(PyObject *text)
{
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    for (int i = 0; i < TYPE_SLOTS && InternedTypes[i] != NULL; i++) {
        PyObject *held = InternedTypes[i];
        if (held == text || same_text(held, text, length)) {
            Py_INCREF(held);
            return held;
        }
    }
    Py_INCREF(text);
    PyUnicode_InternInPlace(&text);
    Py_INCREF(text);
    Py_XSETREF(InternedTypes[NextTypeSlot], text);
    NextTypeSlot = (NextTypeSlot + 1) % TYPE_SLOTS;
    return text;
}

static PyTypeObject *SettledType = NULL; /* the subtype validated last */

static PyObject *
speedups_settle_event_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyType_Check(args[1]) || !PyFrozenSet_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "settle_event_record(record, subtype, rule_types: frozenset)");
        return NULL;
    }
    PyObject *record = args[0], *target = args[1], *rule_types = args[2];
    PyTypeObject *subtype = (PyTypeObject *)target;
    if (subtype != SettledType) {
        if (FrozenDictType == NULL || !PyType_IsSubtype(subtype, (PyTypeObject *)FrozenDictType) ||
            subtype->tp_basicsize != PyDict_Type.tp_basicsize || subtype->tp_dictoffset != 0 ||
            subtype->tp_weaklistoffset != 0) {
            PyErr_SetString(PyExc_TypeError,
                            "settle_event_record() needs a slotless FrozenDict subtype");
            return NULL;
        }
        SettledType = subtype; /* a heap type the caller's module keeps alive */
    }
    if (Py_TYPE(record) != &PyDict_Type || PyDict_GET_SIZE(record) > 7) {
        Py_RETURN_NONE;
    }
    PyObject *found[7] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(record, &pos, &key, &value)) {
        int index = envelope_index(key);
        if (index < 0) {
            Py_RETURN_NONE; /* not an envelope key */
        }
        found[index] = value;
    }
    if (found[0] == NULL || !PyUnicode_CheckExact(found[0]) || found[1] == NULL ||
        !safe_int(found[1], 0) || found[2] == NULL || !safe_int(found[2], -MAX_SAFE_INTEGER) ||
        found[3] == NULL || (found[6] != NULL && found[6] != Py_True)) {
        Py_RETURN_NONE;
    }
    PyObject *sources = found[5];
    if (sources != NULL) {
        if (Py_TYPE(sources) != &PyList_Type) {
            Py_RETURN_NONE;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(sources); i++) {
            if (Py_TYPE(PyList_GET_ITEM(sources, i)) != &PyLong_Type) {
                Py_RETURN_NONE;
            }
        }
    }
    PyObject *event_type = interned_type(found[0]);
    if (event_type != found[0] && PyDict_SetItem(record, EnvelopeKeys[0], event_type) < 0) {
        Py_DECREF(event_type);
        return NULL;
    }
    Py_DECREF(event_type); /* the record and the table hold it */
    if (freeze(record, 0) < 0) {
        if (!PyErr_ExceptionMatches(Fallback)) {
            return NULL;
        }
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    int checked = 1;
    int ruled = PySet_Contains(rule_types, event_type);
    if (ruled < 0) {
        return NULL;
    }
    if (ruled) {
        int kind = message_kind(event_type);
        checked = kind >= 0 && message_rules_hold(kind, found[3]);
    }
    if (checked) {
        Py_INCREF(target);
        Py_SET_TYPE(record, subtype);
        Py_DECREF(FrozenDictType);
    }
    Py_INCREF(record);
    return record;
}

/* settled_types(records, subtype): the set of the "type" values of a list whose items are all
 * exact `subtype` instances (settled events), else None; one pass over the list. */
static PyObject *
speedups_settled_types(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[0]) || !PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "settled_types(records: list, subtype: type)");
        return NULL;
    }
    PyObject *records = args[0];
    PyTypeObject *subtype = (PyTypeObject *)args[1];
    PyObject *types = PySet_New(NULL);
    if (types == NULL) {
        return NULL;
    }
    PyObject *last = NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records); i++) {
        PyObject *record = PyList_GET_ITEM(records, i);
        if (Py_TYPE(record) != subtype) {
            Py_DECREF(types);
            Py_RETURN_NONE;
        }
        PyObject *event_type = PyDict_GetItemWithError(record, EnvelopeKeys[0]);
        if (event_type == NULL) {
            Py_DECREF(types);
            if (PyErr_Occurred()) {
                return NULL;
            }
            Py_RETURN_NONE;
        }
        if (event_type != last && PySet_Add(types, event_type) < 0) {
            Py_DECREF(types);
            return NULL;
        }
        last = event_type;
    }
    return types;
}

static PyObject *
speedups_snapshot(PyObject *module, PyObject *value)
{
    if (FrozenDictType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "agentlog._speedups.configure() was not called");
        return NULL;
    }
    return snap(value, 0);
}

/* snapshot_or(diagnose, value): snapshot(value), and where the walk falls back, the result of
 * diagnose(value) (the Python walker, which accepts or raises naming the JSON path): what
 * agentlog.values.snapshot does, without its Python frame. */
static PyObject *
speedups_snapshot_or(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "snapshot_or() takes exactly 2 arguments");
        return NULL;
    }
    if (FrozenDictType == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "agentlog._speedups.configure() was not called");
        return NULL;
    }
    PyObject *out = snap(args[1], 0);
    if (out == NULL && PyErr_ExceptionMatches(Fallback)) {
        PyErr_Clear();
        return PyObject_CallOneArg(args[0], args[1]);
    }
    return out;
}

static PyObject *
speedups_configure(PyObject *module, PyObject *args)
{
    PyObject *frozen_dict, *frozen_list, *fallback_error;
    if (!PyArg_ParseTuple(args, "O!O!O", &PyType_Type, &frozen_dict, &PyType_Type, &frozen_list,
                          &fallback_error)) {
        return NULL;
    }
    if (!PyType_IsSubtype((PyTypeObject *)frozen_dict, &PyDict_Type) ||
        !PyType_IsSubtype((PyTypeObject *)frozen_list, &PyList_Type)) {
        PyErr_SetString(PyExc_TypeError, "configure() needs a dict and a list subclass");
        return NULL;
    }
    Py_INCREF(frozen_dict);
    Py_INCREF(frozen_list);
    Py_INCREF(fallback_error);
    Py_XSETREF(FrozenDictType, frozen_dict);
    Py_XSETREF(FrozenListType, frozen_list);
    Py_XSETREF(Fallback, fallback_error);
    Py_RETURN_NONE;
}

/* ---- construct(shape, value): objects built from parsed JSON by a fixed plan ----------------
 *
 * The compiled twin of agentlog/values/_construct.py's python_construct (read its docstring for
 * the Shape tuple and the field kinds; both must stay in step). A value outside its shape raises
 * ConstructError (the configured Unconstructible); exceptions of the shape's own callables pass
 * through. Nothing here knows a framework: the instance is made with cls->tp_new (cls.__new__)
 * and its attributes are set with PyObject_GenericSetAttr (object.__setattr__). */

static PyObject *ConstructError = NULL;
static PyObject *EmptyDict = NULL;

enum { F_TEXT, F_FLAG, F_NUMBER, F_MAPPING, F_TEXT_SET, F_NESTED, F_LISTED };
enum {
    S_CLS, S_TEMPLATE, S_FIELDS, S_MADE, S_REQUIRED, S_NULLABLE, S_DICT_ATTR, S_KEYS_ATTR,
    S_CONSTANTS, S_POST_INIT, S_SIZE
};

static PyObject *
unconstructible(void)
{
    PyErr_SetNone(ConstructError);
    return NULL;
}

static PyObject *construct(PyObject *shape, PyObject *value);

static PyObject *
construct_text_set(PyObject *item)
{
    PyObject *found = PySet_New(NULL);
    if (found == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(item); i++) {
        PyObject *text = PyList_GET_ITEM(item, i);
        if (!PyUnicode_CheckExact(text)) {
            Py_DECREF(found);
            return unconstructible();
        }
        if (PySet_Add(found, text) < 0) {
            Py_DECREF(found);
            return NULL;
        }
    }
    return found;
}

static PyObject *
construct_list(PyObject *shape, PyObject *item)
{
    Py_ssize_t size = PyList_GET_SIZE(item);
    PyObject *out = PyList_New(size);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < size && i < PyList_GET_SIZE(item); i++) {
        PyObject *entry = PyList_GET_ITEM(item, i);
        Py_INCREF(entry);
        PyObject *built = construct(shape, entry);
        Py_DECREF(entry);
        if (built == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, built);
    }
    if (PyList_GET_SIZE(item) != size) { /* changed meanwhile by a callable of the shape */
        Py_DECREF(out);
        return unconstructible();
    }
    return out;
}

/* The converted value of one key (a new reference), or NULL with an exception set. */
static PyObject *
construct_field(PyObject *field, PyObject *item)
{
    if (!PyTuple_Check(field) || PyTuple_GET_SIZE(field) != 2) {
        PyErr_SetString(PyExc_TypeError, "construct(): a field is a (kind, arg) tuple");
        return NULL;
    }
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(field, 0));
    if (kind == -1 && PyErr_Occurred()) {
        return NULL;
    }
    PyObject *arg = PyTuple_GET_ITEM(field, 1);
    switch (kind) {
    case F_TEXT:
        if (PyUnicode_CheckExact(item)) {
            return Py_NewRef(item);
        }
        break;
    case F_FLAG:
        if (PyBool_Check(item)) {
            return Py_NewRef(item);
        }
        break;
    case F_NUMBER:
        if (PyFloat_CheckExact(item)) {
            return Py_NewRef(item);
        }
        if (PyLong_CheckExact(item)) {
            double number = PyLong_AsDouble(item);
            if (number == -1.0 && PyErr_Occurred()) {
                if (!PyErr_ExceptionMatches(PyExc_OverflowError)) {
                    return NULL;
                }
                PyErr_Clear();
                break;
            }
            return PyFloat_FromDouble(number);
        }
        break;
    case F_MAPPING:
        if (PyDict_CheckExact(item)) {
            return Py_NewRef(item);
        }
        if (PyDict_Check(item)) {
            return PyObject_CallOneArg(arg, item);
        }
        break;
    case F_TEXT_SET:
        if (item == Py_None) {
            Py_RETURN_NONE;
        }
        if (PyList_Check(item)) {
            return construct_text_set(item);
        }
        break;
    case F_NESTED:
        return construct(arg, item);
    case F_LISTED:
        if (PyList_Check(item)) {
            return construct_list(arg, item);
        }
        break;
    default:
        PyErr_Format(PyExc_ValueError, "construct(): unknown field kind %ld", kind);
        return NULL;
    }
    return unconstructible();
}

/* Fill `values` (a copy of the template) from `value`: the made defaults, then every key. */
static int
construct_values(PyObject *shape, PyObject *value, PyObject *values)
{
    PyObject *made = PyTuple_GET_ITEM(shape, S_MADE);
    PyObject *fields = PyTuple_GET_ITEM(shape, S_FIELDS);
    PyObject *nullable = PyTuple_GET_ITEM(shape, S_NULLABLE);
    PyObject *required = PyTuple_GET_ITEM(shape, S_REQUIRED);
    if (!PyTuple_Check(made) || !PyDict_Check(fields) || !PyAnySet_Check(nullable) ||
        !PyTuple_Check(required)) {
        PyErr_SetString(PyExc_TypeError, "construct(): malformed shape");
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(made); i++) {
        PyObject *pair = PyTuple_GET_ITEM(made, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "construct(): made is a tuple of pairs");
            return -1;
        }
        PyObject *name = PyTuple_GET_ITEM(pair, 0), *make = PyTuple_GET_ITEM(pair, 1);
        int present = PyDict_Contains(value, name);
        if (present < 0) {
            return -1;
        }
        if (present) {
            continue;
        }
        PyObject *fresh = PyTuple_Check(make)                   ? construct(make, EmptyDict)
                          : make == (PyObject *)&PyDict_Type ? PyDict_New()
                          : make == (PyObject *)&PyList_Type ? PyList_New(0)
                                                             : PyObject_CallNoArgs(make);
        if (fresh == NULL) {
            return -1;
        }
        int failed = PyDict_SetItem(values, name, fresh);
        Py_DECREF(fresh);
        if (failed) {
            return -1;
        }
    }
    Py_ssize_t pos = 0;
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        Py_INCREF(key);
        Py_INCREF(item);
        PyObject *converted = NULL;
        PyObject *field = PyDict_GetItemWithError(fields, key);
        if (field != NULL) {
            converted = construct_field(field, item);
        }
        else if (!PyErr_Occurred()) {
            int allowed = item == Py_None ? PySet_Contains(nullable, key) : 0;
            if (allowed > 0) {
                converted = Py_NewRef(Py_None);
            }
            else if (allowed == 0) {
                unconstructible();
            }
        }
        int failed = converted == NULL || PyDict_SetItem(values, key, converted) < 0;
        Py_XDECREF(converted);
        Py_DECREF(key);
        Py_DECREF(item);
        if (failed) {
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(required); i++) {
        int present = PyDict_Contains(value, PyTuple_GET_ITEM(required, i));
        if (present <= 0) {
            if (present == 0) {
                unconstructible();
            }
            return -1;
        }
    }
    return 0;
}

/* object.__setattr__(instance, name, value), shorter for a slot (a member descriptor holding
 * an object, as __slots__ makes): the value is stored in it directly, as member_set would after
 * the same checks. Anything else goes through PyObject_GenericSetAttr. */
static int
set_attribute(PyObject *instance, PyObject *name, PyObject *value)
{
    PyObject *descr = _PyType_Lookup(Py_TYPE(instance), name);
    if (descr != NULL && Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if ((member->type == T_OBJECT_EX || member->type == T_OBJECT) &&
            !(member->flags & READONLY)) {
            PyObject **slot = (PyObject **)((char *)instance + member->offset);
            Py_XSETREF(*slot, Py_NewRef(value));
            return 0;
        }
    }
    return PyObject_GenericSetAttr(instance, name, value);
}

/* Set the instance's attributes: its dict, the set of the given keys, the constants. */
static int
construct_attributes(PyObject *shape, PyObject *instance, PyObject *value, PyObject *values)
{
    if (set_attribute(instance, PyTuple_GET_ITEM(shape, S_DICT_ATTR), values) < 0) {
        return -1;
    }
    PyObject *keys_attr = PyTuple_GET_ITEM(shape, S_KEYS_ATTR);
    if (keys_attr != Py_None) {
        PyObject *keys = PySet_New(value);
        if (keys == NULL) {
            return -1;
        }
        int failed = set_attribute(instance, keys_attr, keys);
        Py_DECREF(keys);
        if (failed < 0) {
            return -1;
        }
    }
    PyObject *constants = PyTuple_GET_ITEM(shape, S_CONSTANTS);
    if (!PyTuple_Check(constants)) {
        PyErr_SetString(PyExc_TypeError, "construct(): constants is a tuple of pairs");
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(constants); i++) {
        PyObject *pair = PyTuple_GET_ITEM(constants, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "construct(): constants is a tuple of pairs");
            return -1;
        }
        if (set_attribute(instance, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0) {
            return -1;
        }
    }
    return 0;
}

static int
construct_post_init(PyObject *shape, PyObject *instance)
{
    PyObject *post_init = PyTuple_GET_ITEM(shape, S_POST_INIT);
    if (post_init == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(post_init) || PyTuple_GET_SIZE(post_init) != 2 ||
        !PyTuple_Check(PyTuple_GET_ITEM(post_init, 1)) ||
        PyTuple_GET_SIZE(PyTuple_GET_ITEM(post_init, 1)) > 7) {
        PyErr_SetString(PyExc_TypeError, "construct(): post_init is (function, args <= 7)");
        return -1;
    }
    PyObject *args = PyTuple_GET_ITEM(post_init, 1);
    PyObject *stack[8];
    stack[0] = instance;
    Py_ssize_t count = PyTuple_GET_SIZE(args);
    for (Py_ssize_t i = 0; i < count; i++) {
        stack[i + 1] = PyTuple_GET_ITEM(args, i);
    }
    PyObject *result = PyObject_Vectorcall(PyTuple_GET_ITEM(post_init, 0), stack,
                                           (size_t)count + 1, NULL);
    if (result == NULL) {
        return -1;
    }
    Py_DECREF(result);
    return 0;
}

static PyObject *
construct(PyObject *shape, PyObject *value)
{
    if (!PyTuple_Check(shape) || PyTuple_GET_SIZE(shape) != S_SIZE ||
        !PyType_Check(PyTuple_GET_ITEM(shape, S_CLS)) ||
        !PyDict_Check(PyTuple_GET_ITEM(shape, S_TEMPLATE))) {
        PyErr_SetString(PyExc_TypeError, "construct(): shape is a Shape tuple");
        return NULL;
    }
    if (!PyDict_Check(value)) {
        return unconstructible();
    }
    if (Py_EnterRecursiveCall(" in construct()")) {
        return NULL;
    }
    PyObject *instance = NULL;
    PyObject *values = PyDict_Copy(PyTuple_GET_ITEM(shape, S_TEMPLATE));
    if (values == NULL || construct_values(shape, value, values) < 0) {
        goto done;
    }
    PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(shape, S_CLS);
    /* object.__new__ without its preparation of an attribute table, which the dict set next
     * would replace at once (materialized first: most of an instance's cost). */
    instance = cls->tp_new == PyBaseObject_Type.tp_new && !(cls->tp_flags & Py_TPFLAGS_IS_ABSTRACT)
                   ? cls->tp_alloc(cls, 0)
                   : cls->tp_new(cls, EmptyTuple, NULL);
    if (instance == NULL) {
        goto done;
    }
    if (construct_attributes(shape, instance, value, values) < 0 ||
        construct_post_init(shape, instance) < 0) {
        Py_CLEAR(instance);
    }
done:
    Py_XDECREF(values);
    Py_LeaveRecursiveCall();
    return instance;
}

static PyObject *
speedups_construct(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "construct(shape, value)");
        return NULL;
    }
    if (ConstructError == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "configure_construct() was not called");
        return NULL;
    }
    return construct(args[0], args[1]);
}

static PyObject *
speedups_configure_construct(PyObject *module, PyObject *error)
{
    Py_INCREF(error);
    Py_XSETREF(ConstructError, error);
    Py_RETURN_NONE;
}

static PyMethodDef speedups_methods[] = {
    {"construct", (PyCFunction)(void (*)(void))speedups_construct, METH_FASTCALL,
     "An instance built from a parsed JSON object by a Shape, or raise the configured error."},
    {"configure_construct", speedups_configure_construct, METH_O,
     "Set the error construct() raises for a value outside its shape."},
    {"snapshot", speedups_snapshot, METH_O,
     "Validate and deep-freeze a lossless JSON value, or raise the fallback error."},
    {"snapshot_or", (PyCFunction)(void (*)(void))speedups_snapshot_or, METH_FASTCALL,
     "snapshot(), or diagnose(value) where the walk falls back."},
    {"configure", speedups_configure, METH_VARARGS,
     "Set the frozen container types and the fallback error class."},
    {"freeze_in_place", speedups_freeze_in_place, METH_O,
     "Validate a freshly parsed value and freeze its own containers, or raise the fallback."},
    {"share_strings", speedups_share_strings, METH_O,
     "Replace the short string values of plain dicts and lists by equal shared ones, in place."},
    {"retype", speedups_retype, METH_VARARGS,
     "Turn an exact FrozenDict into an instance of a slotless FrozenDict subclass, in place."},
    {"untrack", speedups_untrack, METH_O,
     "Take a frozen container out of the cyclic garbage collector's lists; return it."},
    {"new_event_record", (PyCFunction)(void (*)(void))speedups_new_event_record, METH_FASTCALL,
     "An appended event built from validated, frozen parts, untracked."},
    {"message_rules_hold", speedups_message_rules_hold, METH_VARARGS,
     "Whether a message event's data is plainly valid under the per-type rules."},
    {"settled_types", (PyCFunction)(void (*)(void))speedups_settled_types, METH_FASTCALL,
     "The set of the types of a list of settled events, or None if one is not settled."},
    {"settle_event_record", (PyCFunction)(void (*)(void))speedups_settle_event_record,
     METH_FASTCALL,
     "Check a fresh record's envelope (and rules) and freeze it in place as an event, or fall back."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT, "_speedups", "C accelerator for agentlog.values.snapshot.", -1,
    speedups_methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    EmptyTuple = PyTuple_New(0);
    EmptyDict = PyDict_New();
    if (EmptyTuple == NULL || EmptyDict == NULL) {
        return NULL;
    }
    static const char *envelope[7] = {"type", "seq", "time", "data", "surfaceOp",
                                      "sourceEventSeqs", "ignorable"};
    for (int i = 0; i < 7; i++) {
        EnvelopeKeys[i] = PyUnicode_InternFromString(envelope[i]);
        if (EnvelopeKeys[i] == NULL) {
            return NULL;
        }
    }
    static const char *message_types[5] = {"user/message", "assistant/message", "tool/result",
                                           "system/message", "developer/message"};
    for (int i = 0; i < 5; i++) {
        MessageTypes[i] = PyUnicode_InternFromString(message_types[i]);
        RoleNames[i] = PyUnicode_InternFromString(Roles[i]);
        if (MessageTypes[i] == NULL || RoleNames[i] == NULL) {
            return NULL;
        }
    }
    for (int i = 0; i < 19; i++) {
        Keys[i] = PyUnicode_InternFromString(KeyNames[i]);
        if (Keys[i] == NULL) {
            return NULL;
        }
    }
    return PyModule_Create(&speedups_module);
}
