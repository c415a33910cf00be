/* The columnar path's scanner (anemon/parsing/columnar.py), compiled: a block of log lines
 * into plain-line flags and columns, without one Python object per value.
 *
 * scan(lines, keys, modes) -> (flags, columns)
 *   lines: list of str; keys: tuple of bytes (a skeleton's keys, in order); modes: bytes, one
 *   per key: 0 check only, 1 a number (float64), 2 text.
 *   flags: bytes, one per line: 1 where the line is plain, i.e. exactly
 *     "TRIAL k1=v1 k2=v2 ..." with the keys in order, single spaces, each value made of
 *     [A-Za-z0-9_.+-], and every number value read by float() (no "_": those go the
 *     per-line way, which reads them itself).
 *   columns: per key, None (mode 0), bytes of float64 (mode 1; NaN where not plain), or a
 *     list of str (mode 2; None where not plain).
 * Numbers are read by PyOS_string_to_double, which is what float() does with such a text;
 * the Python fallback (a regular expression and float()) gives the same result, and the
 * equivalence tests run both.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_NUMBER 63 /* longer number texts go the per-line way */
#define CACHE 16      /* distinct texts remembered per column (arm names, thermal states) */

enum { CHECK = 0, NUMBER = 1, TEXT = 2 };

static unsigned char allowed[256];

typedef struct {
    const char *chars;
    Py_ssize_t size;
    PyObject *text;
} Cached;

/* The str of chars[0:size], shared with an equal earlier value of the column where it can. */
static PyObject *text_of(Cached *cache, int *used, const char *chars, Py_ssize_t size)
{
    for (int i = 0; i < *used; i++) {
        if (cache[i].size == size && memcmp(cache[i].chars, chars, size) == 0) {
            Py_INCREF(cache[i].text);
            return cache[i].text;
        }
    }
    PyObject *text = PyUnicode_FromStringAndSize(chars, size);
    if (text != NULL && *used < CACHE) { /* ASCII: its data is its chars, one byte each */
        cache[*used].chars = (const char *)PyUnicode_DATA(text);
        cache[*used].size = size;
        cache[*used].text = text; /* borrowed: the column list holds it */
        (*used)++;
    }
    return text;
}

static const double POWERS[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A plain decimal ([+-]digits[.digits], at most 15 significant digits, 22 after the point)
 * into *out, as float() reads it: its digits make an integer below 2^53 and its power of ten
 * is exact, so their quotient, rounded once by the division, is the correctly rounded value
 * float() gives (Clinger's fast path). 0 for anything else: read by PyOS_string_to_double. */
static int decimal_of(const char *p, const char *end, double *out)
{
    int negative = 0, point = 0, digits = 0, fraction = 0, any = 0;
    uint64_t mantissa = 0;
    if (p < end && (*p == '-' || *p == '+'))
        negative = *p++ == '-';
    for (; p < end; p++) {
        if (*p >= '0' && *p <= '9') {
            if (digits > 0 || *p != '0')
                digits++;
            if (digits > 15)
                return 0;
            mantissa = mantissa * 10 + (uint64_t)(*p - '0');
            fraction += point;
            any = 1;
        } else if (*p == '.' && !point) {
            point = 1;
        } else {
            return 0;
        }
    }
    if (!any || fraction > 22)
        return 0;
    double value = (double)mantissa / POWERS[fraction];
    *out = negative ? -value : value;
    return 1;
}

/* float(chars[0:size]) into *out; 0 where float() would refuse it or may read it otherwise. */
static int number_of(const char *chars, Py_ssize_t size, double *out)
{
    char buffer[MAX_NUMBER + 1];
    if (size == 0 || size > MAX_NUMBER || memchr(chars, '_', size) != NULL)
        return 0;
    if (decimal_of(chars, chars + size, out))
        return 1;
    memcpy(buffer, chars, size);
    buffer[size] = '\0';
    double value = PyOS_string_to_double(buffer, NULL, NULL);
    if (value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *out = value;
    return 1;
}

static PyObject *scan(PyObject *self, PyObject *args)
{
    PyObject *lines, *keys, *result = NULL, *flags = NULL, *columns = NULL;
    const char *modes;
    Py_ssize_t mode_count;
    if (!PyArg_ParseTuple(args, "O!O!y#", &PyList_Type, &lines, &PyTuple_Type, &keys, &modes,
                          &mode_count))
        return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(keys), n = PyList_GET_SIZE(lines);
    if (k == 0 || mode_count != k) {
        PyErr_SetString(PyExc_ValueError, "scan: one mode per key, at least one key");
        return NULL;
    }
    const char **key = PyMem_Calloc(k, sizeof(char *));
    Py_ssize_t *key_size = PyMem_Calloc(k, sizeof(Py_ssize_t));
    Py_ssize_t *start = PyMem_Calloc(k, sizeof(Py_ssize_t));
    Py_ssize_t *stop = PyMem_Calloc(k, sizeof(Py_ssize_t));
    double *number = PyMem_Calloc(k, sizeof(double));
    Cached *cache = PyMem_Calloc(k * CACHE, sizeof(Cached));
    int *used = PyMem_Calloc(k, sizeof(int));
    if (!key || !key_size || !start || !stop || !number || !cache || !used) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < k; j++) {
        char *chars;
        if (PyBytes_AsStringAndSize(PyTuple_GET_ITEM(keys, j), &chars, &key_size[j]) < 0)
            goto done;
        key[j] = chars;
    }
    flags = PyBytes_FromStringAndSize(NULL, n);
    columns = PyList_New(k);
    if (flags == NULL || columns == NULL)
        goto done;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *column = modes[j] == NUMBER ? PyBytes_FromStringAndSize(NULL, n * sizeof(double))
                         : modes[j] == TEXT   ? PyList_New(n)
                                              : Py_NewRef(Py_None);
        if (column == NULL)
            goto done;
        PyList_SET_ITEM(columns, j, column);
    }
    char *flag = PyBytes_AS_STRING(flags);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        int plain = 0;
        if (PyUnicode_Check(line) && PyUnicode_IS_ASCII(line)) {
            const char *p = (const char *)PyUnicode_DATA(line);
            Py_ssize_t size = PyUnicode_GET_LENGTH(line), at = 6;
            plain = size >= 6 && memcmp(p, "TRIAL ", 6) == 0;
            for (Py_ssize_t j = 0; plain && j < k; j++) {
                if (j > 0) {
                    plain = at < size && p[at] == ' ';
                    at++;
                }
                plain = plain && size - at > key_size[j] && memcmp(p + at, key[j], key_size[j]) == 0
                        && p[at + key_size[j]] == '=';
                if (!plain)
                    break;
                at += key_size[j] + 1;
                start[j] = at;
                while (at < size && allowed[(unsigned char)p[at]])
                    at++;
                stop[j] = at;
            }
            plain = plain && at == size;
            for (Py_ssize_t j = 0; plain && j < k; j++) {
                if (modes[j] == NUMBER)
                    plain = number_of(p + start[j], stop[j] - start[j], &number[j]);
            }
            for (Py_ssize_t j = 0; plain && j < k; j++) {
                PyObject *column = PyList_GET_ITEM(columns, j);
                if (modes[j] == NUMBER) {
                    ((double *)PyBytes_AS_STRING(column))[i] = number[j];
                } else if (modes[j] == TEXT) {
                    PyObject *text = text_of(cache + j * CACHE, used + j, p + start[j],
                                             stop[j] - start[j]);
                    if (text == NULL)
                        goto done;
                    PyList_SET_ITEM(column, i, text);
                }
            }
        }
        flag[i] = (char)plain;
        if (plain)
            continue;
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *column = PyList_GET_ITEM(columns, j);
            if (modes[j] == NUMBER)
                ((double *)PyBytes_AS_STRING(column))[i] = Py_NAN;
            else if (modes[j] == TEXT)
                PyList_SET_ITEM(column, i, Py_NewRef(Py_None));
        }
    }
    result = PyTuple_Pack(2, flags, columns);
done:
    if (result == NULL && columns != NULL) { /* a list's unset items must not be left NULL */
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(columns); j++) {
            PyObject *column = PyList_GET_ITEM(columns, j);
            if (column != NULL && PyList_Check(column)) {
                for (Py_ssize_t i = 0; i < PyList_GET_SIZE(column); i++) {
                    if (PyList_GET_ITEM(column, i) == NULL)
                        PyList_SET_ITEM(column, i, Py_NewRef(Py_None));
                }
            }
        }
    }
    Py_XDECREF(flags);
    Py_XDECREF(columns);
    PyMem_Free(key);
    PyMem_Free(key_size);
    PyMem_Free(start);
    PyMem_Free(stop);
    PyMem_Free(number);
    PyMem_Free(cache);
    PyMem_Free(used);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Split a block of lines into plain-line flags and columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan", "The columnar path's compiled scanner.", -1, methods,
};

PyMODINIT_FUNC PyInit__scan(void)
{
    const char *chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-";
    for (const char *c = chars; *c; c++)
        allowed[(unsigned char)*c] = 1;
    return PyModule_Create(&module);
}
