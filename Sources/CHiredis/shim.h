// hiredis, the Redis project's C client (Debian's libhiredis-dev): the blocking API that
// MockServer's RedisConnection wraps.
#include <hiredis/hiredis.h>
