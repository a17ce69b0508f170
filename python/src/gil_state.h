#ifndef SIFT_PYTHON_SRC_GIL_STATE_H_
#define SIFT_PYTHON_SRC_GIL_STATE_H_

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if some thread holds the GIL, 0 if none does, -1 if this interpreter
 * version does not say (gil_state.c). Callable without the GIL: it reads one
 * atomic flag, and the answer may be stale by the time it returns. */
int SiftPythonGilLocked(void);

#ifdef __cplusplus
}
#endif

#endif /* SIFT_PYTHON_SRC_GIL_STATE_H_ */
