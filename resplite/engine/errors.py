"""Error texts, exactly as Redis words them, and :class:`CommandError`, which carries one.

Handlers raise :class:`CommandError`; the dispatcher turns it into one error reply and
nothing else about the connection or the keyspace changes. The message carries its own
code: ``ERR ...`` for generic errors, and bare codes such as ``WRONGTYPE``, ``NOGROUP``,
``BUSYGROUP``, ``EXECABORT``, ``NOAUTH`` and ``WRONGPASS`` without an ``ERR`` prefix, as
Redis sends them. Constants hold fixed texts; functions build the ones that embed arguments.

Where a text lives: a text that more than one module answers lives here. A text only one
module answers may live here or in that module, next to the code that raises it (the
dispatcher's and the connection's own replies, a command's own option errors, the layers
below the engine, which cannot import it), so that a command's meaning can stay with the
command. Either way a text is written once: no two modules write the same words, every
text here is used, and no two constants here hold the same words
(``tests/unit/test_error_texts.py``).
"""

from __future__ import annotations


class CommandError(Exception):
    """A command failed with a Redis error reply. ``message`` includes the error code."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def code(self) -> str:
        """The error code, the first word of the message (``ERR``, ``WRONGTYPE`` ...)."""
        return self.message.split(" ", 1)[0]


WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
SYNTAX = "ERR syntax error"
NOT_INTEGER = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"
NO_SUCH_KEY = "ERR no such key"
BUSYKEY = "BUSYKEY Target key name already exists."  # RESTORE, MIGRATE
BAD_DUMP_PAYLOAD = "ERR DUMP payload version or checksum are wrong"  # RESTORE, FUNCTION RESTORE
DB_INDEX_OUT_OF_RANGE = "ERR DB index is out of range"
INVALID_EXPIRE = "ERR invalid expire time in '{}' command"
NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
OOM = "OOM command not allowed when used memory > 'maxmemory'."
EXECABORT = "EXECABORT Transaction discarded because of previous errors."
MULTI_NESTED = "ERR MULTI calls can not be nested"
EXEC_WITHOUT_MULTI = "ERR EXEC without MULTI"
DISCARD_WITHOUT_MULTI = "ERR DISCARD without MULTI"
WATCH_INSIDE_MULTI = "ERR WATCH inside MULTI is not allowed"
TIMEOUT_NEGATIVE = "ERR timeout is negative"
TIMEOUT_NOT_FLOAT = "ERR timeout is not a float or out of range"
TIMEOUT_OUT_OF_RANGE = "ERR timeout is out of range"
UNBLOCKED = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
LOADING = "LOADING Redis is loading the dataset in memory"
TIMEOUT_NOT_INTEGER = "ERR timeout is not an integer or out of range"
BAD_CLIENT_NAME = "ERR Client names cannot contain spaces, newlines or special characters."
INVALID_CLIENT_ID = "ERR Invalid client ID"
CLIENT_ID_NOT_POSITIVE = "ERR client-id should be greater than 0"
MAXAGE_NOT_INTEGER = "ERR maxage is not an integer or out of range"
MAXAGE_NOT_POSITIVE = "ERR maxage should be greater than 0"
NO_SUCH_CLIENT = "ERR No such client"
PAUSE_MODE = "ERR CLIENT PAUSE mode must be WRITE or ALL"
UNBLOCK_REASON = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
NO_CLUSTER = "ERR This instance has cluster support disabled"
SELECT_IN_CLUSTER = "ERR SELECT is not allowed in cluster mode"
INVALID_SLOT = "ERR Invalid slot"
INVALID_SLOT_OR_COUNT = "ERR Invalid slot or number of keys"
INVALID_OR_OUT_OF_RANGE_SLOT = "ERR Invalid or out of range slot"  # Redis's getSlotOrReply
# CLUSTER SLOT-STATS (Redis 8.2)
SLOT_STATS_METRIC = "ERR Unrecognized sort metric for ORDERBY."
SLOT_STATS_LIMIT = "ERR Limit has to lie in between 1 and 16384 (maximum number of slots)."
SLOT_STATS_REPEATED = "ERR Multiple filters of the same type are disallowed."


def slot_range_reversed(start: int, end: int) -> str:
    return f"ERR Start slot number {start} is greater than end slot number {end}"


MIGRATE_IOERR = "IOERR error or timeout connecting to the client"
NO_SHUTDOWN_IN_PROGRESS = "ERR No shutdown in progress."
NO_CONFIG_FILE = "ERR The server is running without a config file"
SHUTDOWN_FAILED = "ERR Errors trying to SHUTDOWN. Check logs."
INVALID_FIRST_DB = "ERR invalid first DB index"
INVALID_SECOND_DB = "ERR invalid second DB index"
SLOWLOG_COUNT = "ERR count should be greater than or equal to -1"


def wrong_arity(fullname: str) -> str:
    return f"ERR wrong number of arguments for '{fullname}' command"


def user_text(arg: bytes, limit: int = 128) -> str:
    """User input echoed in an error: at most ``limit`` bytes, byte-exact on the wire.

    Undecodable bytes survive as surrogates and the encoder turns them back into the
    original bytes, as Redis echoes input unchanged (only CR and LF become spaces).
    """
    return arg[:limit].decode("utf-8", "surrogateescape")


def _c_string(arg: bytes) -> bytes:
    # Redis prints arguments with %s: a NUL byte ends them.
    return arg.split(b"\0", 1)[0]


def unknown_command(name: bytes, args: list[bytes], bare: bool = True) -> str:
    """Redis's text: the arguments are quoted one by one until 128 bytes have been shown,
    the last one cut to what is left of the 128. Without arguments, ``bare`` (Redis 8.6)
    ends the text at the name; Redis 7.0 adds ", with args beginning with: " regardless."""
    text = f"ERR unknown command '{user_text(_c_string(name))}'"
    if bare and not args:
        return text
    shown = b""
    for arg in args:
        if len(shown) >= 128:
            break
        shown += b"'" + _c_string(arg)[: 128 - len(shown)] + b"' "
    return text + ", with args beginning with: " + shown.decode("utf-8", "surrogateescape")


def unknown_subcommand(sub: bytes, container: str) -> str:
    return (
        f"ERR unknown subcommand '{user_text(sub)}'. "
        f"Try {container.upper()} HELP."
    )


def subcommand_syntax(argv: list[bytes]) -> str:
    """Redis's answer to a known subcommand given the wrong number or kind of arguments."""
    return (
        f"ERR unknown subcommand or wrong number of arguments for '{user_text(argv[1])}'. "
        f"Try {user_text(argv[0], 1 << 20).upper()} HELP."
    )


def unknown_client_type(name: bytes) -> str:
    return f"ERR Unknown client type '{user_text(name, 1 << 20)}'"


def no_such_user(name: bytes) -> str:
    return f"ERR No such user '{user_text(name, 1 << 20)}'"


def unrecognized_option(name: bytes) -> str:
    return f"ERR Unrecognized option '{user_text(name, 1 << 20)}'"


def bad_client_attr(attr: bytes) -> str:
    return (
        f"ERR {user_text(attr, 1 << 20)} cannot contain spaces, newlines or special characters."
    )


def unknown_acl_category(name: bytes) -> str:
    return f"ERR Unknown category '{user_text(name, 1 << 20)}'"


# ACL refusals as Redis 8 words them (getAclErrorMessage; Redis 7.2 changed 7.0's texts).
# The short forms follow "NOPERM " in a refused command's reply and "ERR ACL failure in
# script: " in a script's; ACL DRYRUN answers the long forms, which name the key or channel.
NOPERM = "NOPERM "
ACL_SCRIPT_FAILURE = "ERR ACL failure in script: "
ACL_DENIED_KEY = "No permissions to access a key"
ACL_DENIED_CHANNEL = "No permissions to access a channel"
# A queued command that the rules no longer allow when EXEC runs it.
ACL_CHANGED_IN_MULTI = (
    "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
    "EXEC call. This command is no longer allowed for the following reason: "
)
ACL_CHANGED_COMMAND = "no permission to execute the command or subcommand"
ACL_CHANGED_KEY = "no permission to touch the specified keys"
ACL_CHANGED_CHANNEL = "no permission to access one of the channels used as arguments"


def acl_denied_command(username: str, fullname: str) -> str:
    return f"User {username} has no permissions to run the '{fullname}' command"


def acl_denied_object(username: str, name: bytes, kind: str) -> str:
    """ACL DRYRUN's long form: which key or channel (``kind``) the user may not use."""
    return (f"User {username} has no permissions to access the "
            f"'{user_text(name, 1 << 30)}' {kind}")


def config_unknown_option(name: bytes) -> str:
    return (
        "ERR Unknown option or number of arguments for CONFIG SET - "
        f"'{user_text(name, 1 << 20)}'"
    )


def config_set_failed(name: str, reason: str) -> str:
    return f"ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}"


# RESPLITE.CLOCK (resplite's own command; the wording is ours).
FAULT_DISABLED = (
    "ERR RESPLITE.FAULT is disabled on this server: start it with 'enable-fault-command yes' "
    "(or 'local' to allow it from local connections only)"
)
FAULT_ONE_LINE = "ERR the fault's error reply must be one line"
FAULT_TIMES = "ERR TIMES must be a positive number of calls"
FAULT_DELAY = "ERR the delay must not be negative"
CLOCK_DISABLED = (
    "ERR RESPLITE.CLOCK is disabled on this server: start it with 'enable-clock-command yes' "
    "(or 'local' to allow it from local connections only)"
)
CLOCK_BACKWARDS = (
    "ERR ADVANCE only moves the clock forwards; use RESPLITE.CLOCK SET to set an earlier time"
)
CLOCK_OUT_OF_RANGE = "ERR clock time out of range: it must stay between 0 and 253402300799999 ms"


# Sorted sets (ZADD, ZRANGE, ZUNIONSTORE, ZMPOP ...), worded exactly as Redis words them.
ZADD_XX_AND_NX = "ERR XX and NX options at the same time are not compatible"
ZADD_GT_LT_NX = "ERR GT, LT, and/or NX options at the same time are not compatible"
ZADD_INCR_ONE_PAIR = "ERR INCR option supports a single increment-element pair"
SCORE_NAN = "ERR resulting score is not a number (NaN)"
MIN_MAX_NOT_FLOAT = "ERR min or max is not a float"
MIN_MAX_NOT_LEX = "ERR min or max not valid string range item"
ZRANGE_LIMIT_NEEDS_BY = (
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
)
ZRANGE_WITHSCORES_BYLEX = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
WEIGHT_NOT_FLOAT = "ERR weight value is not a float"
VALUE_OUT_OF_RANGE = "ERR value is out of range"


def at_least_one_key(fullname: str) -> str:
    """ZUNION / ZINTER / ZDIFF (and their STORE forms, ZINTERCARD) with numkeys below 1."""
    return f"ERR at least 1 input key is needed for '{fullname}' command"


# Sets (SPOP, SRANDMEMBER, SINTERCARD), sorted sets and SORT, worded exactly as Redis words them.
NOT_POSITIVE = "ERR value is out of range, must be positive"
NUMLOCAL_OUT_OF_RANGE = "ERR value is out of range, value must between 0 and 1"  # WAITAOF
WAITAOF_APPENDONLY_OFF = (
    "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."
)
LONG_OUT_OF_RANGE = (
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)
NUMKEYS_NOT_POSITIVE = "ERR numkeys should be greater than 0"
COUNT_NOT_POSITIVE = "ERR count should be greater than 0"  # ZMPOP, LMPOP and their B- forms
NUMKEYS_TOO_MANY = "ERR Number of keys can't be greater than number of args"
LIMIT_CANT_BE_NEGATIVE = "ERR LIMIT can't be negative"
SORT_NOT_DOUBLE = "ERR One or more scores can't be converted into double"
SORT_BY_DENIED = "ERR BY option of SORT denied due to insufficient ACL permissions."
SORT_GET_DENIED = "ERR GET option of SORT denied due to insufficient ACL permissions."
# Not Redis's: it would build such a reply until memory ran out; worded as the count's range.
REPLY_TOO_LONG = VALUE_OUT_OF_RANGE


# Streams (XADD, XREAD, XGROUP, XCLAIM ...), worded exactly as Redis words them.
INVALID_STREAM_ID = "ERR Invalid stream ID specified as stream command argument"
XADD_ID_TOO_SMALL = (
    "ERR The ID specified in XADD is equal or smaller than the target stream top item"
)
XADD_ID_ZERO = "ERR The ID specified in XADD must be greater than 0-0"
STREAM_EXHAUSTED = "ERR The stream has exhausted the last possible ID, unable to add more items"
ELEMENTS_TOO_LARGE = "ERR Elements are too large to be stored"
MAXLEN_NEGATIVE = "ERR The MAXLEN argument must be >= 0."
LIMIT_NEGATIVE = "ERR The LIMIT argument must be >= 0."
MAXLEN_AND_MINID = (
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
)
LIMIT_WITHOUT_STRATEGY = (
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
)
LIMIT_WITHOUT_APPROX = "ERR syntax error, LIMIT cannot be used without the special ~ option"
XTRIM_WITHOUT_STRATEGY = "ERR syntax error, XTRIM must be called with a trimming strategy"
INTERVAL_START = "ERR invalid start ID for the interval"
INTERVAL_END = "ERR invalid end ID for the interval"
NUMIDS_NOT_POSITIVE = "ERR Number of IDs must be a positive integer"
NUMIDS_MISMATCH = "ERR The `numids` parameter must match the number of arguments"
IDS_REQUIRED = "ERR IDS option is required"
XREAD_GT_WITHOUT_GROUP = (
    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
    "<consumer> option."
)
XREADGROUP_DOLLAR = (
    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history "
    "of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ "
    "ID would just return an empty result set."
)
XREADGROUP_PLUS = (
    "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history "
    "of this consumer by specifying a proper ID, or use the > ID to get new messages. The + "
    "ID would just return an empty result set."
)
XREADGROUP_NO_GROUP = "ERR Missing GROUP option for XREADGROUP"
CLAIM_NOT_INTEGER = "ERR min-idle-time is not an integer or out of range"
CLAIM_NEGATIVE = "ERR min-idle-time must be a positive integer"
BUSYGROUP = "BUSYGROUP Consumer Group name already exists"
XGROUP_NO_KEY = (
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
    "to use the MKSTREAM option to create an empty stream automatically."
)
ENTRIESREAD_INVALID = "ERR value for ENTRIESREAD must be positive or -1"
ENTRIES_ADDED_NEGATIVE = "ERR entries_added must be positive"
XSETID_BELOW_MAX_DELETED_ARG = (
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
)
XSETID_BELOW_MAX_DELETED = (
    "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"
)
XSETID_BELOW_TOP = "ERR The ID specified in XSETID is smaller than the target stream top item"
XSETID_ENTRIES_ADDED_SMALL = (
    "ERR The entries_added specified in XSETID is smaller than the target stream length"
)
XCLAIM_MIN_IDLE = "ERR Invalid min-idle-time argument for XCLAIM"
XCLAIM_IDLE = "ERR Invalid IDLE option argument for XCLAIM"
XCLAIM_TIME = "ERR Invalid TIME option argument for XCLAIM"
XCLAIM_RETRYCOUNT = "ERR Invalid RETRYCOUNT option argument for XCLAIM"
XAUTOCLAIM_MIN_IDLE = "ERR Invalid min-idle-time argument for XAUTOCLAIM"
COUNT_MUST_BE_ABOVE_0 = "ERR COUNT must be > 0"  # XAUTOCLAIM, GEOSEARCH / GEORADIUS COUNT
# Idempotent producers (Redis 8.6): XADD IDMP / IDMPAUTO and XCFGSET.
IDMP_TWICE = "ERR syntax error, IDMP/IDMPAUTO specified multiple times"
IDMP_EXPLICIT_ID = "ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs"
IDMP_EMPTY_PID = "ERR syntax error, IDMP requires a non-empty producer ID"
IDMP_EMPTY_IID = "ERR syntax error, IDMP requires a non-empty idempotent ID"
IDMPAUTO_EMPTY_PID = "ERR syntax error, IDMPAUTO requires a non-empty producer ID"
XCFGSET_NOTHING = "ERR At least one parameter must be specified"
XCFGSET_DURATION_TWICE = "ERR IDMP-DURATION specified multiple times"
XCFGSET_MAXSIZE_TWICE = "ERR IDMP-MAXSIZE specified multiple times"
# XIDMPRECORD (Redis 8.6.2), which an append-only file's rewrite uses to keep iids.
XIDMPRECORD_EMPTY_PID = "ERR producer ID must be non-empty"
XIDMPRECORD_EMPTY_IID = "ERR idempotent ID must be non-empty"
XIDMPRECORD_NO_ENTRY = "ERR No such message in stream"
XIDMPRECORD_CONFLICT = "ERR IID already exists for this producer with a different stream ID"
IDMP_DURATION_RANGE = "ERR IDMP-DURATION must be between 1 and 86400 seconds"
IDMP_MAXSIZE_RANGE = "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"
# XNACK (Redis 8.8).
XNACK_RETRYCOUNT = "ERR Invalid RETRYCOUNT option argument for XNACK"
# XREAD / XREADGROUP MAXCOUNT and MAXSIZE (Redis 8.10).
MAXCOUNT_NOT_POSITIVE = "ERR MAXCOUNT must be a positive integer"
MAXSIZE_NOT_POSITIVE = "ERR MAXSIZE must be a positive integer"
MAXCOUNT_BELOW_COUNT = "ERR MAXCOUNT must be greater than or equal to COUNT"


def _c_text(arg: bytes) -> str:
    """User input echoed through C's ``%s``: whole, but cut at the first NUL byte."""
    return user_text(arg.split(b"\x00", 1)[0], len(arg))


def latency_no_samples(event: bytes) -> str:
    return f"ERR No samples available for event '{_c_text(event)}'"


def xclaim_unknown_option(option: bytes) -> str:
    return f"ERR Unrecognized XCLAIM option '{_c_text(option)}'"


def xreadgroup_only(option: str) -> str:
    """An XREADGROUP option given to XREAD."""
    return f"ERR The {option} option is only supported by XREADGROUP. You called XREAD instead."


def unbalanced_streams(fullname: str) -> str:
    """XREAD/XREADGROUP whose STREAMS list has an odd length (Redis 7.4+ wording)."""
    symbol = "ID or '>'" if fullname == "xreadgroup" else "ID, '+', or '$'"
    return (
        f"ERR Unbalanced '{fullname}' list of streams: for each stream key an {symbol} "
        "must be specified."
    )


def nogroup_key_or_group(key: bytes, group: bytes, suffix: str = "") -> str:
    """NOGROUP for XREADGROUP / XPENDING / XCLAIM / XAUTOCLAIM."""
    return (
        f"NOGROUP No such key '{_c_text(key)}' or consumer group '{_c_text(group)}'{suffix}"
    )


def nogroup_for_key(group: bytes, key: bytes) -> str:
    """NOGROUP for XGROUP SETID / CREATECONSUMER / DELCONSUMER and XINFO CONSUMERS."""
    return (
        f"NOGROUP No such consumer group '{_c_text(group)}' for key name '{_c_text(key)}'"
    )


# Keyspace and string commands.
DECREMENT_OVERFLOW = "ERR decrement would overflow"
INCR_NAN_OR_INF = "ERR increment would produce NaN or Infinity"
# HOTKEYS (Redis 8.6): Redis documents the cases; these words are resplite's.
HOTKEYS_METRICS = (
    "ERR METRICS must name 1 or 2 distinct metrics, CPU and/or NET, after their count"
)
HOTKEYS_COUNT = "ERR COUNT must be between 1 and 64"
HOTKEYS_DURATION = "ERR DURATION must be a non-negative integer"
HOTKEYS_SAMPLE = "ERR SAMPLE must be a positive integer"
HOTKEYS_SLOTS = "ERR SLOTS is only allowed in cluster mode"
HOTKEYS_SLOTS_UNSUPPORTED = "ERR HOTKEYS START SLOTS is not supported by this server"
HOTKEYS_ACTIVE = "ERR hotkeys tracking is already in progress"
HOTKEYS_NOT_ACTIVE = "ERR hotkeys tracking is not active"
HOTKEYS_RESET_ACTIVE = "ERR hotkeys tracking is active: stop it before RESET"
# HIMPORT (Redis 8.10): the words client libraries' tests look for; the rest is resplite's.
HIMPORT_NO_FIELDSET = "ERR no such fieldset on this connection"
HIMPORT_DUPLICATE_FIELD = "ERR duplicate field name in fieldset"
HIMPORT_VALUE_COUNT = "ERR value count does not match the number of fields in the fieldset"
INCREX_BOUNDS = "ERR LBOUND must be less than or equal to UBOUND"  # the text is resplite's
STRING_TOO_LONG = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
OFFSET_OUT_OF_RANGE = "ERR offset is out of range"
LCS_NOT_STRINGS = "ERR The specified keys must contain string values"
LCS_LEN_AND_IDX = "ERR If you want both the length and indexes, please just use IDX."
LCS_TOO_LONG = "ERR String too long for LCS"
LCS_TABLE_TOO_BIG = (
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
)
SAME_OBJECT = "ERR source and destination objects are the same"
# SET / DELEX IFDEQ and IFDNE (Redis 8.4): a digest is DIGEST's 16 hexadecimal characters.
DIGEST_LENGTH = "ERR must be exactly 16 hexadecimal characters"
# DELEX with a condition it does not know (Redis's tests match "Invalid condition").
DELEX_CONDITION = "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE"
DELEX_NOT_STRING = "ERR Key should be of string type if conditions are specified"
# MSETEX (Redis 8.4).
INVALID_NUMKEYS = "ERR invalid numkeys value"
KEY_VALUE_PAIRS = "ERR wrong number of key-value pairs"
INVALID_CURSOR = "ERR invalid cursor"
NOVALUES_HSCAN_ONLY = "ERR NOVALUES option can only be used in HSCAN"  # Redis 7.4
EXPIRE_NX_AND_OTHERS = "ERR NX and XX, GT or LT options at the same time are not compatible"
EXPIRE_GT_AND_LT = "ERR GT and LT options at the same time are not compatible"
_POLICY_SWITCH_NOTE = (
    "Please note that when switching between policies at runtime LRU and LFU data will take "
    "some time to adjust."
)
IDLETIME_UNDER_LFU = (
    "ERR An LFU maxmemory policy is selected, idle time not tracked. " + _POLICY_SWITCH_NOTE
)
FREQ_WITHOUT_LFU = (
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. "
    + _POLICY_SWITCH_NOTE
)


def invalid_expire(fullname: str) -> str:
    return INVALID_EXPIRE.format(fullname)


def unsupported_expire_option(option: bytes) -> str:
    return f"ERR Unsupported option {_c_text(option)}"
INT32_OUT_OF_RANGE = "ERR value is out of range, value must between -2147483648 and 2147483647"

# -- bitmaps, BITFIELD, HyperLogLog --------------------------------------------------------------

BIT_OFFSET = "ERR bit offset is not an integer or out of range"
BIT_VALUE = "ERR bit is not an integer or out of range"
BIT_ARGUMENT = "ERR The bit argument must be 1 or 0."
BITOP_NOT_ONE_KEY = "ERR BITOP NOT must be called with a single source key."
BITFIELD_TYPE = (
    "ERR Invalid bitfield type. Use something like i16 u8. "
    "Note that u64 is not supported but i64 is."
)
BITFIELD_OVERFLOW = "ERR Invalid OVERFLOW type specified"
BITFIELD_RO_GET_ONLY = "ERR BITFIELD_RO only supports the GET subcommand"
HLL_WRONGTYPE = "WRONGTYPE Key is not a valid HyperLogLog string value."
HLL_CORRUPT = "INVALIDOBJ Corrupted HLL object detected"
HLL_NO_KEY = "ERR The specified key does not exist"
HLL_NOT_SPARSE = "ERR HLL encoding is not sparse"


def pfdebug_unknown(sub: bytes) -> str:
    return f"ERR Unknown PFDEBUG subcommand '{_c_text(sub)}'"


def pfdebug_arity(sub: bytes) -> str:
    return f"ERR Wrong number of arguments for the '{_c_text(sub)}' subcommand"


def bitop_needs_two_keys(op: str) -> str:
    """Redis 8.2: DIFF, DIFF1 and ANDOR take a first key and at least one more."""
    return f"ERR BITOP {op.upper()} must be called with at least two source keys."


# -- hash field expiry (Redis 7.4 and 8.0) -------------------------------------------------------

HFE_NEGATIVE_TIME = "ERR invalid expire time, must be >= 0"
HFE_FIELDS_MISSING = "ERR Mandatory argument FIELDS is missing or not at the right position"
HFE_NUMFIELDS_MISMATCH = "ERR The `numfields` parameter must match the number of arguments"
HFE_NUMFIELDS_NOT_POSITIVE = "ERR Number of fields must be a positive integer"
HFE_NUMFIELDS_NOT_POSITIVE_HEXPIRE = "ERR Parameter `numFields` should be greater than 0"
HSETEX_NUMFIELDS = "ERR invalid number of fields"
HSETEX_ONE_EXPIRY = "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
HGETEX_ONE_EXPIRY = "ERR Only one of EX, PX, EXAT, PXAT or PERSIST arguments can be specified"
# Redis 8.6's flexible order of the hash field expiry options (FIELDS anywhere after the key
# or the time).
HFE_FIELDS_TWICE = "ERR FIELDS keyword specified multiple times"
HFE_FIELDS_TOO_FEW = "ERR FIELDS requires at least numfields and one field argument"
HFE_FIELDS_ABSENT = "ERR missing FIELDS argument"
HFE_FIELDS_SHORT = "ERR wrong number of arguments"
HFE_CONDITIONS = "ERR Multiple condition flags specified"
HFE_UNKNOWN_ARGUMENT = "ERR unknown argument"
HSETEX_MISSING_TIME = "ERR missing expire time"
HSETEX_ONE_CONDITION = "ERR Only one of FXX or FNX arguments can be specified"


def unknown_argument(arg: bytes) -> str:
    return f"ERR unknown argument: {_c_text(arg)}"


# Lists (LSET, LPOS); LPOP's count, LREM's count and LMPOP's numkeys and count share the
# texts above.
INDEX_OUT_OF_RANGE = "ERR index out of range"
LPOS_RANK_ZERO = (
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "
    "negative to start from the end of the list"
)
LPOS_COUNT_NEGATIVE = "ERR COUNT can't be negative"
LPOS_MAXLEN_NEGATIVE = "ERR MAXLEN can't be negative"
