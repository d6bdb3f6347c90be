// Debian's libxml2 is built with ICU, and encoding.h then includes the system ICU headers, whose types
// clash with the toolchain's _FoundationICU in modules that see both. Nothing here uses libxml2's ICU
// converter fields (only pointers to xmlCharEncodingHandler travel through the API), so its view is hidden.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>
#include <libxml/xmlerror.h>
