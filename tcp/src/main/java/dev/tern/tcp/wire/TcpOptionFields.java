package dev.tern.tcp.wire;

/**
 * The options of one received segment, parsed from a checked {@link TcpHeader}: a mutable holder, reused per segment
 * (one per shard inside {@code TcpSegment}); tests and tools may make their own.
 *
 * <p>Every length comes from the wire and is untrusted: an option whose length is below 2 or runs past the data
 * offset ends parsing and sets {@link #malformed()} (the options read before it stay); a known option with the wrong
 * length is ignored, as Linux does. At most {@link TcpOption#MAX_SACK_BLOCKS} SACK blocks are kept.
 */
public final class TcpOptionFields {
    /** Value of {@link #mss()} and {@link #windowScale()} when the option was absent. */
    public static final int ABSENT = -1;

    private int mss = ABSENT;
    private int windowScale = ABSENT;
    private boolean sackPermitted;
    private boolean timestamp;
    private int tsVal;
    private int tsEcr;
    private int sackCount;
    private final int[] sackLeft = new int[TcpOption.MAX_SACK_BLOCKS];
    private final int[] sackRight = new int[TcpOption.MAX_SACK_BLOCKS];
    private boolean malformed;
    private int fastOpenLength = ABSENT;
    private boolean fastOpenExperimental;
    private long fastOpenHigh;
    private long fastOpenLow;

    /** Reads the options of {@code header}, which passed {@link TcpHeader#check()}; returns false when malformed. */
    public boolean parse(TcpHeader header) {
        mss = ABSENT;
        windowScale = ABSENT;
        sackPermitted = false;
        timestamp = false;
        sackCount = 0;
        malformed = false;
        fastOpenLength = ABSENT;
        final int end = header.dataOffset() - TcpHeader.MIN_LENGTH;
        int i = 0;
        while (i < end) {
            final int kind = header.optionByte(i);
            if (kind == TcpOption.END) {
                break;
            }
            if (kind == TcpOption.NOP) {
                i++;
                continue;
            }
            if (i + 1 >= end) {
                malformed = true;
                break;
            }
            final int length = header.optionByte(i + 1);
            if (length < 2 || i + length > end) {
                malformed = true;
                break;
            }
            switch (kind) {
                case TcpOption.MSS -> {
                    if (length == TcpOption.MSS_LENGTH) {
                        mss = header.option16(i + 2);
                    }
                }
                case TcpOption.WINDOW_SCALE -> {
                    if (length == TcpOption.WINDOW_SCALE_LENGTH) {
                        windowScale = Math.min(header.optionByte(i + 2), TcpOption.MAX_WINDOW_SCALE);
                    }
                }
                case TcpOption.SACK_PERMITTED -> {
                    if (length == TcpOption.SACK_PERMITTED_LENGTH) {
                        sackPermitted = true;
                    }
                }
                case TcpOption.TIMESTAMP -> {
                    if (length == TcpOption.TIMESTAMP_LENGTH) {
                        timestamp = true;
                        tsVal = header.option32(i + 2);
                        tsEcr = header.option32(i + 6);
                    }
                }
                case TcpOption.SACK -> {
                    if ((length - 2) % 8 == 0) {
                        final int blocks = Math.min((length - 2) / 8, TcpOption.MAX_SACK_BLOCKS);
                        for (int b = 0; b < blocks; b++) {
                            sackLeft[b] = header.option32(i + 2 + 8 * b);
                            sackRight[b] = header.option32(i + 6 + 8 * b);
                        }
                        sackCount = blocks;
                    }
                }
                case TcpOption.FAST_OPEN -> fastOpen(header, i + TcpOption.FAST_OPEN_BASE_LENGTH,
                    length - TcpOption.FAST_OPEN_BASE_LENGTH, false);
                case TcpOption.EXPERIMENTAL -> {
                    if (length >= TcpOption.FAST_OPEN_EXPERIMENTAL_BASE_LENGTH
                        && header.option16(i + 2) == TcpOption.FAST_OPEN_MAGIC) {
                        fastOpen(header, i + TcpOption.FAST_OPEN_EXPERIMENTAL_BASE_LENGTH,
                            length - TcpOption.FAST_OPEN_EXPERIMENTAL_BASE_LENGTH, true);
                    }
                }
                default -> {
                    // RFC 9293 §3.2: an option we do not know is skipped by its length.
                }
            }
            i += length;
        }
        return !malformed;
    }

    /**
     * A Fast Open option (RFC 7413 §4.1.1): no cookie is a request; a cookie of another length than 4 to 16 even bytes
     * is taken as none, as Linux's tcp_parse_fastopen_option ignores it. The first one of a segment counts.
     */
    private void fastOpen(TcpHeader header, int at, int cookieLength, boolean experimental) {
        if (fastOpenLength != ABSENT || cookieLength != 0 && (cookieLength < TcpOption.FAST_OPEN_MIN_COOKIE
            || cookieLength > TcpOption.FAST_OPEN_MAX_COOKIE || (cookieLength & 1) != 0)) {
            return;
        }
        long high = 0;
        long low = 0;
        for (int b = 0; b < cookieLength; b++) {
            // The cookie's bytes in wire order, the first at the top of the high word.
            if (b < 8) {
                high |= (long) header.optionByte(at + b) << (56 - 8 * b);
            } else {
                low |= (long) header.optionByte(at + b) << (56 - 8 * (b - 8));
            }
        }
        fastOpenLength = cookieLength;
        fastOpenExperimental = experimental;
        fastOpenHigh = high;
        fastOpenLow = low;
    }

    /** Clears every field: a segment with no options. */
    public void clear() {
        mss = ABSENT;
        windowScale = ABSENT;
        sackPermitted = false;
        timestamp = false;
        sackCount = 0;
        malformed = false;
        fastOpenLength = ABSENT;
    }

    public int mss() {
        return mss;
    }

    public int windowScale() {
        return windowScale;
    }

    public boolean sackPermitted() {
        return sackPermitted;
    }

    public boolean hasTimestamp() {
        return timestamp;
    }

    public int tsVal() {
        return tsVal;
    }

    public int tsEcr() {
        return tsEcr;
    }

    public int sackCount() {
        return sackCount;
    }

    public int sackLeft(int block) {
        return sackLeft[block];
    }

    public int sackRight(int block) {
        return sackRight[block];
    }

    /** Bytes of the Fast Open cookie: {@link #ABSENT} without the option, 0 for a cookie request. */
    public int fastOpenLength() {
        return fastOpenLength;
    }

    /** Whether the Fast Open option came as the experimental kind 254 with ExID 0xF989. */
    public boolean fastOpenExperimental() {
        return fastOpenExperimental;
    }

    /** The cookie's first 8 bytes, the first byte on the wire in the top bits (zero-filled after its length). */
    public long fastOpenHigh() {
        return fastOpenHigh;
    }

    /** The cookie's bytes 8 to 15, likewise. */
    public long fastOpenLow() {
        return fastOpenLow;
    }

    public boolean malformed() {
        return malformed;
    }
}
