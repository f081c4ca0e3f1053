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
            default -> "opt-" + kind;
        };
    }
}
