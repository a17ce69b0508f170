/* Whether some thread holds the GIL, for ReleaseGil's wait before it takes
 * the GIL back (handles.h). CPython has no public call for this; 3.11 keeps it
 * in _PyRuntime.ceval.gil.locked, declared in its internal headers (shipped
 * by python3.11-dev), which need Py_BUILD_CORE. This is C, as those headers
 * are: their atomics are C11's. Other versions, or an installation without
 * the internal headers, answer -1 (unknown), and ReleaseGil then takes the
 * GIL back the ordinary way. */
#define Py_BUILD_CORE 1
#include "gil_state.h"

#include <Python.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && \
    __has_include(<internal/pycore_runtime.h>)
#include <internal/pycore_runtime.h>

int SiftPythonGilLocked(void) {
  return _Py_atomic_load_relaxed(&_PyRuntime.ceval.gil.locked) != 0;
}
#else
int SiftPythonGilLocked(void) { return -1; }
#endif
