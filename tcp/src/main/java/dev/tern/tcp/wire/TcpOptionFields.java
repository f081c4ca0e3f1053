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

    /** Reads the options of {@code header}, which passed {@link TcpHeader#check()}; returns false when malformed. */
    public boolean parse(TcpHeader header) {
        mss = ABSENT;
        windowScale = ABSENT;
        sackPermitted = false;
        timestamp = false;
        sackCount = 0;
        malformed = false;
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
                default -> {
                    // RFC 9293 §3.2: an option we do not know is skipped by its length.
                }
            }
            i += length;
        }
        return !malformed;
    }

    /** Clears every field: a segment with no options. */
    public void clear() {
        mss = ABSENT;
        windowScale = ABSENT;
        sackPermitted = false;
        timestamp = false;
        sackCount = 0;
        malformed = false;
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

    public boolean malformed() {
        return malformed;
    }
}
