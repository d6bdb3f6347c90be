// libxml2, loaded with dlopen on first use instead of linked at start (issue 20: libxml2 brings ICU and
// liblzma, about 0.9 MiB of resident pages, into every process, though few fixtures match XML).
//
// The declarations below are the part of libxml2's public ABI (soname libxml2.so.2, 2.9 to 2.13) that
// XMLSupport uses, copied from its headers: the structure layouts up to the fields read, the enum values,
// and the functions, which are called through pointers looked up once. The headers themselves cannot be
// used: they are found with pkg-config, and a package target that asks pkg-config for them also links
// `-lxml2`, which loads the library at start. Call `clibxml2_load` (once-only, thread-safe) and check it
// before any other function here.
#ifndef CLIBXML2_H
#define CLIBXML2_H

#include <stddef.h>

typedef unsigned char xmlChar;

typedef enum {
  XML_ELEMENT_NODE = 1,
  XML_ATTRIBUTE_NODE = 2,
  XML_TEXT_NODE = 3,
  XML_CDATA_SECTION_NODE = 4,
  XML_ENTITY_REF_NODE = 5,
  XML_ENTITY_NODE = 6,
  XML_PI_NODE = 7,
  XML_COMMENT_NODE = 8,
  XML_DOCUMENT_NODE = 9,
  XML_DOCUMENT_TYPE_NODE = 10,
  XML_DOCUMENT_FRAG_NODE = 11,
  XML_NOTATION_NODE = 12,
  XML_HTML_DOCUMENT_NODE = 13,
  XML_DTD_NODE = 14,
  XML_ELEMENT_DECL = 15,
  XML_ATTRIBUTE_DECL = 16,
  XML_ENTITY_DECL = 17,
  XML_NAMESPACE_DECL = 18,
  XML_XINCLUDE_START = 19,
  XML_XINCLUDE_END = 20,
  XML_DOCB_DOCUMENT_NODE = 21
} xmlElementType;

/// The parser options XMLSupport passes (parser.h's xmlParserOption).
typedef enum {
  XML_PARSE_NOERROR = 1 << 5,
  XML_PARSE_NOWARNING = 1 << 6,
  XML_PARSE_NOBLANKS = 1 << 8,
  XML_PARSE_NONET = 1 << 11,
  XML_PARSE_NOCDATA = 1 << 14
} xmlParserOption;

typedef enum {
  XPATH_UNDEFINED = 0,
  XPATH_NODESET = 1,
  XPATH_BOOLEAN = 2,
  XPATH_NUMBER = 3,
  XPATH_STRING = 4,
  XPATH_POINT = 5,
  XPATH_RANGE = 6,
  XPATH_LOCATIONSET = 7,
  XPATH_USERS = 8,
  XPATH_XSLT_TREE = 9
} xmlXPathObjectType;

typedef struct _xmlDoc xmlDoc;
typedef xmlDoc *xmlDocPtr;
typedef struct _xmlBuffer xmlBuffer;
typedef xmlBuffer *xmlBufferPtr;
typedef struct _xmlXPathCompExpr xmlXPathCompExpr;
typedef xmlXPathCompExpr *xmlXPathCompExprPtr;
typedef struct _xmlParserInput xmlParserInput;
typedef xmlParserInput *xmlParserInputPtr;
typedef struct _xmlParserCtxt xmlParserCtxt;
typedef xmlParserCtxt *xmlParserCtxtPtr;

typedef struct _xmlNs xmlNs;
typedef xmlNs *xmlNsPtr;
struct _xmlNs {
  struct _xmlNs *next;
  int type;
  const xmlChar *href;
  const xmlChar *prefix;
  void *_private;
  struct _xmlDoc *context;
};

typedef struct _xmlNode xmlNode;
typedef xmlNode *xmlNodePtr;
typedef struct _xmlAttr xmlAttr;
typedef xmlAttr *xmlAttrPtr;

struct _xmlAttr {
  void *_private;
  xmlElementType type;
  const xmlChar *name;
  struct _xmlNode *children;
  struct _xmlNode *last;
  struct _xmlNode *parent;
  struct _xmlAttr *next;
  struct _xmlAttr *prev;
  struct _xmlDoc *doc;
  xmlNs *ns;
  int atype;
  void *psvi;
};

struct _xmlNode {
  void *_private;
  xmlElementType type;
  const xmlChar *name;
  struct _xmlNode *children;
  struct _xmlNode *last;
  struct _xmlNode *parent;
  struct _xmlNode *next;
  struct _xmlNode *prev;
  struct _xmlDoc *doc;
  xmlNs *ns;
  xmlChar *content;
  struct _xmlAttr *properties;
  xmlNs *nsDef;
  void *psvi;
  unsigned short line;
  unsigned short extra;
};

typedef struct _xmlError xmlError;
typedef xmlError *xmlErrorPtr;
struct _xmlError {
  int domain;
  int code;
  char *message;
  int level;
  char *file;
  int line;
  char *str1;
  char *str2;
  char *str3;
  int int1;
  int int2;
  void *ctxt;
  void *node;
};

typedef void (*xmlStructuredErrorFunc)(void *userData, xmlErrorPtr error);
typedef xmlParserInputPtr (*xmlExternalEntityLoader)(
  const char *URL, const char *ID, xmlParserCtxtPtr context);

typedef struct _xmlNodeSet xmlNodeSet;
typedef xmlNodeSet *xmlNodeSetPtr;
struct _xmlNodeSet {
  int nodeNr;
  int nodeMax;
  xmlNodePtr *nodeTab;
};

typedef struct _xmlXPathObject xmlXPathObject;
typedef xmlXPathObject *xmlXPathObjectPtr;
struct _xmlXPathObject {
  xmlXPathObjectType type;
  xmlNodeSetPtr nodesetval;
  int boolval;
  double floatval;
  xmlChar *stringval;
  void *user;
  int index;
  void *user2;
  int index2;
};

/// xpath.h's context up to `depth` (libxml2 2.9.11 and later; the library allocates the structure).
/// `opLimit` bounds the operations (and nodes visited) of one evaluation: past it the evaluation fails
/// with "Operation limit exceeded" and `opCount` says how many were taken.
typedef struct _xmlXPathContext xmlXPathContext;
typedef xmlXPathContext *xmlXPathContextPtr;
struct _xmlXPathContext {
  xmlDocPtr doc;
  xmlNodePtr node;
  int nb_variables_unused;
  int max_variables_unused;
  void *varHash;
  int nb_types;
  int max_types;
  void *types;
  int nb_funcs_unused;
  int max_funcs_unused;
  void *funcHash;
  int nb_axis;
  int max_axis;
  void *axis;
  xmlNsPtr *namespaces;
  int nsNr;
  void *user;
  int contextSize;
  int proximityPosition;
  int xptr;
  xmlNodePtr here;
  xmlNodePtr origin;
  void *nsHash;
  void *varLookupFunc;
  void *varLookupData;
  void *extra;
  const xmlChar *function;
  const xmlChar *functionURI;
  void *funcLookupFunc;
  void *funcLookupData;
  xmlNsPtr *tmpNsList;
  int tmpNsNr;
  void *userData;
  xmlStructuredErrorFunc error;
  xmlError lastError;
  xmlNodePtr debugNode;
  void *dict;
  int flags;
  void *cache;
  unsigned long opLimit;
  unsigned long opCount;
  int depth;
};

/// The functions, looked up by name in the library.
typedef struct {
  void (*xmlInitParser)(void);
  void (*xmlSetExternalEntityLoader)(xmlExternalEntityLoader f);
  void (*xmlResetLastError)(void);
  xmlErrorPtr (*xmlGetLastError)(void);
  xmlDocPtr (*xmlReadMemory)(const char *buffer, int size, const char *URL, const char *encoding, int options);
  void (*xmlFreeDoc)(xmlDocPtr cur);
  xmlNodePtr (*xmlDocGetRootElement)(const xmlDoc *doc);
  xmlBufferPtr (*xmlBufferCreate)(void);
  void (*xmlBufferFree)(xmlBufferPtr buf);
  void (*xmlBufferEmpty)(xmlBufferPtr buf);
  const xmlChar *(*xmlBufferContent)(const xmlBuffer *buf);
  int (*xmlNodeDump)(xmlBufferPtr buf, xmlDocPtr doc, xmlNodePtr cur, int level, int format);
  int (*xmlNodeBufGetContent)(xmlBufferPtr buffer, const xmlNode *cur);
  xmlXPathContextPtr (*xmlXPathNewContext)(xmlDocPtr doc);
  void (*xmlXPathFreeContext)(xmlXPathContextPtr ctxt);
  xmlXPathCompExprPtr (*xmlXPathCtxtCompile)(xmlXPathContextPtr ctxt, const xmlChar *str);
  void (*xmlXPathFreeCompExpr)(xmlXPathCompExprPtr comp);
  int (*xmlXPathRegisterNs)(xmlXPathContextPtr ctxt, const xmlChar *prefix, const xmlChar *ns_uri);
  xmlXPathObjectPtr (*xmlXPathEvalExpression)(const xmlChar *str, xmlXPathContextPtr ctxt);
  void (*xmlXPathFreeObject)(xmlXPathObjectPtr obj);
  /// The library's version (`xmlParserVersion`, 20914 for 2.9.14), or 0 when it does not say.
  int version;
} clibxml2_functions;

/// Loads libxml2 and looks its functions up, once per process (later calls return the first outcome;
/// safe from any thread).
/// @return NULL when loaded; otherwise why not (the dynamic loader's message), valid for the process.
const char *clibxml2_load(void);

/// Opens `library` and looks up every function in `functions` (what `clibxml2_load` does with libxml2's
/// name, without the once-only cache: for tests of the failure message).
/// @return NULL on success; otherwise a message in `message` (at most `capacity` bytes with the NUL).
const char *clibxml2_open(const char *library, clibxml2_functions *functions, char *message, size_t capacity);

/// The loaded functions; only after `clibxml2_load` returned NULL.
extern clibxml2_functions clibxml2;

static inline void xmlInitParser(void) { clibxml2.xmlInitParser(); }
static inline void xmlSetExternalEntityLoader(xmlExternalEntityLoader f) { clibxml2.xmlSetExternalEntityLoader(f); }
static inline void xmlResetLastError(void) { clibxml2.xmlResetLastError(); }
static inline xmlErrorPtr xmlGetLastError(void) { return clibxml2.xmlGetLastError(); }
static inline xmlDocPtr xmlReadMemory(
  const char *buffer, int size, const char *URL, const char *encoding, int options) {
  return clibxml2.xmlReadMemory(buffer, size, URL, encoding, options);
}
static inline void xmlFreeDoc(xmlDocPtr cur) { clibxml2.xmlFreeDoc(cur); }
static inline xmlNodePtr xmlDocGetRootElement(const xmlDoc *doc) { return clibxml2.xmlDocGetRootElement(doc); }
static inline xmlBufferPtr xmlBufferCreate(void) { return clibxml2.xmlBufferCreate(); }
static inline void xmlBufferFree(xmlBufferPtr buf) { clibxml2.xmlBufferFree(buf); }
static inline void xmlBufferEmpty(xmlBufferPtr buf) { clibxml2.xmlBufferEmpty(buf); }
static inline const xmlChar *xmlBufferContent(const xmlBuffer *buf) { return clibxml2.xmlBufferContent(buf); }
static inline int xmlNodeDump(xmlBufferPtr buf, xmlDocPtr doc, xmlNodePtr cur, int level, int format) {
  return clibxml2.xmlNodeDump(buf, doc, cur, level, format);
}
static inline int xmlNodeBufGetContent(xmlBufferPtr buffer, const xmlNode *cur) {
  return clibxml2.xmlNodeBufGetContent(buffer, cur);
}
static inline xmlXPathContextPtr xmlXPathNewContext(xmlDocPtr doc) { return clibxml2.xmlXPathNewContext(doc); }
static inline void xmlXPathFreeContext(xmlXPathContextPtr ctxt) { clibxml2.xmlXPathFreeContext(ctxt); }
static inline xmlXPathCompExprPtr xmlXPathCtxtCompile(xmlXPathContextPtr ctxt, const xmlChar *str) {
  return clibxml2.xmlXPathCtxtCompile(ctxt, str);
}
static inline void xmlXPathFreeCompExpr(xmlXPathCompExprPtr comp) { clibxml2.xmlXPathFreeCompExpr(comp); }
static inline int xmlXPathRegisterNs(xmlXPathContextPtr ctxt, const xmlChar *prefix, const xmlChar *ns_uri) {
  return clibxml2.xmlXPathRegisterNs(ctxt, prefix, ns_uri);
}
static inline xmlXPathObjectPtr xmlXPathEvalExpression(const xmlChar *str, xmlXPathContextPtr ctxt) {
  return clibxml2.xmlXPathEvalExpression(str, ctxt);
}
static inline void xmlXPathFreeObject(xmlXPathObjectPtr obj) { clibxml2.xmlXPathFreeObject(obj); }
/// True when the loaded library's XPath context has `opLimit` and `opCount` (2.9.11 and later).
static inline int clibxml2_has_operation_limit(void) { return clibxml2.version >= 20911; }

#endif
