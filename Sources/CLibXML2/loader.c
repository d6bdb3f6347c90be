#include "CLibXML2.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if defined(__APPLE__)
#define CLIBXML2_LIBRARY "libxml2.2.dylib"
#else
#define CLIBXML2_LIBRARY "libxml2.so.2"
#endif

clibxml2_functions clibxml2;

typedef void (*clibxml2_generic_error)(void *context, const char *message, ...);
typedef void (*clibxml2_set_generic_error)(void *context, clibxml2_generic_error handler);

/// A generic error handler that prints nothing.
static void clibxml2_silent(void *context, const char *message, ...) {
  (void)context;
  (void)message;
}

const char *clibxml2_open(const char *library, clibxml2_functions *functions, char *message, size_t capacity) {
  // RTLD_LOCAL: its symbols stay out of the global namespace; the handle is never closed.
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *reason = dlerror();
    snprintf(message, capacity, "could not load libxml2 (%s)", reason ? reason : library);
    return message;
  }
#define CLIBXML2_LOOK_UP(name)                                                                           \
  do {                                                                                                   \
    void *symbol = dlsym(handle, #name);                                                                 \
    if (symbol == NULL) {                                                                                \
      snprintf(message, capacity, "could not load libxml2 (%s has no %s)", library, #name);             \
      dlclose(handle);                                                                                   \
      return message;                                                                                    \
    }                                                                                                    \
    memcpy(&functions->name, &symbol, sizeof symbol);                                                    \
  } while (0)
  CLIBXML2_LOOK_UP(xmlInitParser);
  CLIBXML2_LOOK_UP(xmlSetExternalEntityLoader);
  CLIBXML2_LOOK_UP(xmlResetLastError);
  CLIBXML2_LOOK_UP(xmlGetLastError);
  CLIBXML2_LOOK_UP(xmlReadMemory);
  CLIBXML2_LOOK_UP(xmlFreeDoc);
  CLIBXML2_LOOK_UP(xmlDocGetRootElement);
  CLIBXML2_LOOK_UP(xmlBufferCreate);
  CLIBXML2_LOOK_UP(xmlBufferFree);
  CLIBXML2_LOOK_UP(xmlBufferEmpty);
  CLIBXML2_LOOK_UP(xmlBufferContent);
  CLIBXML2_LOOK_UP(xmlNodeDump);
  CLIBXML2_LOOK_UP(xmlNodeBufGetContent);
  CLIBXML2_LOOK_UP(xmlXPathNewContext);
  CLIBXML2_LOOK_UP(xmlXPathFreeContext);
  CLIBXML2_LOOK_UP(xmlXPathCtxtCompile);
  CLIBXML2_LOOK_UP(xmlXPathFreeCompExpr);
  CLIBXML2_LOOK_UP(xmlXPathRegisterNs);
  CLIBXML2_LOOK_UP(xmlXPathEvalExpression);
  CLIBXML2_LOOK_UP(xmlXPathFreeObject);
#undef CLIBXML2_LOOK_UP
  // libxml2 prints some diagnostics on stderr itself (an XPath naming an unknown function, on every
  // evaluation; an encoding error) where our callers already read the error from xmlGetLastError. Its
  // generic error channel is silenced for this thread and, as the default, for every thread that calls
  // libxml2 later (both functions are in every 2.x release; missing ones are skipped).
  void *thread_default = dlsym(handle, "xmlThrDefSetGenericErrorFunc");
  void *this_thread = dlsym(handle, "xmlSetGenericErrorFunc");
  clibxml2_set_generic_error set;
  if (thread_default != NULL) {
    memcpy(&set, &thread_default, sizeof set);
    set(NULL, clibxml2_silent);
  }
  if (this_thread != NULL) {
    memcpy(&set, &this_thread, sizeof set);
    set(NULL, clibxml2_silent);
  }
  // `const char *const xmlParserVersion`: "20914" for 2.9.14.
  const char *const *version = dlsym(handle, "xmlParserVersion");
  functions->version = 0;
  if (version != NULL && *version != NULL) {
    for (const char *c = *version; *c >= '0' && *c <= '9' && functions->version < 10000000; c++) {
      functions->version = functions->version * 10 + (*c - '0');
    }
  }
  return NULL;
}

static pthread_once_t clibxml2_once = PTHREAD_ONCE_INIT;
static const char *clibxml2_problem;
static char clibxml2_message[512];

static void clibxml2_load_once(void) {
  clibxml2_problem = clibxml2_open(CLIBXML2_LIBRARY, &clibxml2, clibxml2_message, sizeof clibxml2_message);
}

const char *clibxml2_load(void) {
  pthread_once(&clibxml2_once, clibxml2_load_once);
  return clibxml2_problem;
}
