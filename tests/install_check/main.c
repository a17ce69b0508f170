/* A C program using only the installed sift/c.h: proves that sift::sift_c
   (CMake) and sift_c.pc (pkg-config) link a program written in C. */
#include <stdio.h>
#include <string.h>

#include "sift/c.h"

int main(int argc, char** argv) {
  char* err = NULL;
  sift_options_t* options;
  sift_readoptions_t* ro;
  sift_writeoptions_t* wo;
  sift_t* db;
  char* value;
  size_t len = 0;
  int ok;
  if (argc != 2) return 2;
  options = sift_options_create();
  sift_options_set_create_if_missing(options, 1);
  sift_destroy_db(options, argv[1], &err);
  db = sift_open(options, argv[1], &err);
  if (db == NULL) {
    fprintf(stderr, "open: %s\n", err);
    sift_free(err);
    return 1;
  }
  ro = sift_readoptions_create();
  wo = sift_writeoptions_create();
  sift_put(db, wo, "hello", 5, "world", 5, &err);
  value = sift_get(db, ro, "hello", 5, &len, &err);
  ok = err == NULL && value != NULL && len == 5 &&
       memcmp(value, "world", 5) == 0;
  sift_free(value);
  sift_close(db);
  sift_destroy_db(options, argv[1], &err);
  ok = ok && err == NULL;
  sift_free(err);
  sift_readoptions_destroy(ro);
  sift_writeoptions_destroy(wo);
  sift_options_destroy(options);
  if (!ok) return 1;
  printf("C install check ok (sift %d.%d)\n", sift_major_version(),
         sift_minor_version());
  return 0;
}
