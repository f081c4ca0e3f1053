package dev.tern.tcp.wire;

/** TCP option kinds and lengths (RFC 9293 §3.2, RFC 7323, RFC 2018), as Tern sends and understands them. */
public final class TcpOption {
    public static final int END = 0;
    public static final int NOP = 1;
    /** Maximum segment size (RFC 9293 §3.7.1): 4 bytes, only on SYN. */
    public static final int MSS = 2;
    public static final int MSS_LENGTH = 4;
    /** Window scale (RFC 7323 §2): 3 bytes, only on SYN. */
    public static final int WINDOW_SCALE = 3;
    public static final int WINDOW_SCALE_LENGTH = 3;
    /** RFC 7323 §2.3: a shift above 14 is taken as 14. */
    public static final int MAX_WINDOW_SCALE = 14;
    /** SACK permitted (RFC 2018 §2): 2 bytes, only on SYN. */
    public static final int SACK_PERMITTED = 4;
    public static final int SACK_PERMITTED_LENGTH = 2;
    /** SACK blocks (RFC 2018 §3): 2 + 8n bytes. */
    public static final int SACK = 5;
    public static final int MAX_SACK_BLOCKS = 4;
    /** Timestamps (RFC 7323 §3): 10 bytes. */
    public static final int TIMESTAMP = 8;
    public static final int TIMESTAMP_LENGTH = 10;
    /** TCP Fast Open cookie (RFC 7413 §4.1.1): 2 bytes, plus a cookie of 4 to 16 bytes (none: a request). */
    public static final int FAST_OPEN = 34;
    public static final int FAST_OPEN_BASE_LENGTH = 2;
    /** Experimental option (RFC 6994) that carried Fast Open before kind 34: its 16-bit ExID follows the length. */
    public static final int EXPERIMENTAL = 254;
    public static final int FAST_OPEN_MAGIC = 0xF989;
    public static final int FAST_OPEN_EXPERIMENTAL_BASE_LENGTH = 4;
    /** RFC 7413 §4.1.1: a cookie is 4 to 16 bytes long (Linux also takes only even lengths). */
    public static final int FAST_OPEN_MIN_COOKIE = 4;
    public static final int FAST_OPEN_MAX_COOKIE = 16;
    /** The options area can hold at most 40 bytes (data offset of 15 words). */
    public static final int MAX_OPTIONS_LENGTH = 40;

    private TcpOption() {
    }

    public static String name(int kind) {
        return switch (kind) {
            case END -> "eol";
            case NOP -> "nop";
            case MSS -> "mss";
            case WINDOW_SCALE -> "wscale";
            case SACK_PERMITTED -> "sackOK";
            case SACK -> "sack";
            case TIMESTAMP -> "TS";
            case FAST_OPEN -> "FO";
            case EXPERIMENTAL -> "FOEXP";
            default -> "opt-" + kind;
        };
    }
}
