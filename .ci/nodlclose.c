/* Keeps shared objects loaded (dlclose does nothing) so that LeakSanitizer can name the
   Open MPI components that allocated what it reports, and the suppressions can match them. */
int dlclose(void* handle) {
  (void)handle;
  return 0;
}
