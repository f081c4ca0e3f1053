package dev.tern.tcp.wire;

import dev.tern.core.checksum.InternetChecksum;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A TCP header and its options as values, for tests, tools and fuzzers; never built per segment.
 *
 * <p>{@link #emit} writes options in the order Linux uses (MSS, SACK permitted, timestamps, window scale, SACK
 * blocks, then Fast Open), padded with NOPs to 32-bit words, so a frame built from a repr looks like one a kernel
 * would send.
 *
 * @param sourcePort      source port
 * @param destinationPort destination port
 * @param seq             sequence number
 * @param ack             acknowledgment number
 * @param flags           {@link TcpFlags} bits
 * @param window          window field, unscaled
 * @param mss             MSS option, or -1
 * @param windowScale     window scale option, or -1
 * @param sackPermitted   SACK-permitted option present
 * @param timestamp       timestamps option present
 * @param tsVal           TSval
 * @param tsEcr           TSecr
 * @param sackBlocks      SACK blocks as left, right pairs (empty for none)
 * @param payloadLength   bytes after the header
 * @param fastOpenCookie  the Fast Open option's cookie (RFC 7413 §4.1.1): null without the option, empty for a request
 * @param fastOpenExperimental the Fast Open option is the experimental kind 254 with ExID 0xF989
 */
public record TcpRepr(int sourcePort, int destinationPort, int seq, int ack, int flags, int window, int mss,
                      int windowScale, boolean sackPermitted, boolean timestamp, int tsVal, int tsEcr,
                      int[] sackBlocks, int payloadLength, byte[] fastOpenCookie, boolean fastOpenExperimental) {

    /** A header without a Fast Open option. */
    public TcpRepr(int sourcePort, int destinationPort, int seq, int ack, int flags, int window, int mss,
                   int windowScale, boolean sackPermitted, boolean timestamp, int tsVal, int tsEcr, int[] sackBlocks,
                   int payloadLength) {
        this(sourcePort, destinationPort, seq, ack, flags, window, mss, windowScale, sackPermitted, timestamp, tsVal,
            tsEcr, sackBlocks, payloadLength, null, false);
    }

    /** A header with no options and no payload. */
    public static TcpRepr of(int sourcePort, int destinationPort, int seq, int ack, int flags, int window) {
        return new TcpRepr(sourcePort, destinationPort, seq, ack, flags, window, -1, -1, false, false, 0, 0,
            new int[0], 0);
    }

    /** Reads a header that passed {@link TcpHeader#check()}; {@code length} is the whole segment (header and data). */
    public static TcpRepr parse(TcpHeader header, int length) {
        final TcpOptionFields options = new TcpOptionFields();
        options.parse(header);
        final int[] sack = new int[options.sackCount() * 2];
        for (int i = 0; i < options.sackCount(); i++) {
            sack[2 * i] = options.sackLeft(i);
            sack[2 * i + 1] = options.sackRight(i);
        }
        byte[] cookie = null;
        if (options.fastOpenLength() != TcpOptionFields.ABSENT) {
            cookie = new byte[options.fastOpenLength()];
            for (int i = 0; i < cookie.length; i++) {
                final long word = i < 8 ? options.fastOpenHigh() : options.fastOpenLow();
                cookie[i] = (byte) (word >>> (56 - 8 * (i % 8)));
            }
        }
        return new TcpRepr(header.sourcePort(), header.destinationPort(), header.sequence(), header.acknowledgment(),
            header.flags(), header.window(), options.mss(), options.windowScale(), options.sackPermitted(),
            options.hasTimestamp(), options.tsVal(), options.tsEcr(), sack, length - header.dataOffset(), cookie,
            options.fastOpenExperimental());
    }

    /** Bytes of options {@link #emit} writes (a multiple of 4). */
    public int optionsLength() {
        int length = 0;
        if (mss >= 0) {
            length += 4;
        }
        if (sackPermitted && timestamp) {
            length += 12;
        } else if (sackPermitted) {
            length += 4;
        } else if (timestamp) {
            length += 12;
        }
        if (windowScale >= 0) {
            length += 4;
        }
        if (sackBlocks.length > 0) {
            length += 4 + 4 * sackBlocks.length;
        }
        if (fastOpenCookie != null) {
            length += (fastOpenBase() + fastOpenCookie.length + 3) & ~3;
        }
        return length;
    }

    private int fastOpenBase() {
        return fastOpenExperimental ? TcpOption.FAST_OPEN_EXPERIMENTAL_BASE_LENGTH : TcpOption.FAST_OPEN_BASE_LENGTH;
    }

    public int headerLength() {
        return TcpHeader.MIN_LENGTH + optionsLength();
    }

    /** Writes every header field and the options; the checksum field is left zero (see {@link #fillChecksum}). */
    public void emit(TcpHeader header) {
        final int optionsLength = optionsLength();
        if (optionsLength > TcpOption.MAX_OPTIONS_LENGTH) {
            throw new IllegalArgumentException("options need " + optionsLength + " bytes, more than 40");
        }
        header.write(sourcePort, destinationPort, seq, ack, TcpHeader.MIN_LENGTH + optionsLength, flags, window);
        int i = 0;
        if (mss >= 0) {
            header.optionByte(i, TcpOption.MSS).optionByte(i + 1, TcpOption.MSS_LENGTH).option16(i + 2, mss);
            i += 4;
        }
        if (sackPermitted && timestamp) {
            header.optionByte(i, TcpOption.SACK_PERMITTED).optionByte(i + 1, TcpOption.SACK_PERMITTED_LENGTH);
            i = timestamp(header, i + 2);
        } else if (sackPermitted) {
            header.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.NOP)
                .optionByte(i + 2, TcpOption.SACK_PERMITTED).optionByte(i + 3, TcpOption.SACK_PERMITTED_LENGTH);
            i += 4;
        } else if (timestamp) {
            header.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.NOP);
            i = timestamp(header, i + 2);
        }
        if (windowScale >= 0) {
            header.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.WINDOW_SCALE)
                .optionByte(i + 2, TcpOption.WINDOW_SCALE_LENGTH).optionByte(i + 3, windowScale);
            i += 4;
        }
        if (sackBlocks.length > 0) {
            header.optionByte(i, TcpOption.NOP).optionByte(i + 1, TcpOption.NOP).optionByte(i + 2, TcpOption.SACK)
                .optionByte(i + 3, 2 + 4 * sackBlocks.length);
            i += 4;
            for (int block : sackBlocks) {
                header.option32(i, block);
                i += 4;
            }
        }
        if (fastOpenCookie != null) {
            // After the others, padded with NOPs, as Linux writes it.
            final int end = i + ((fastOpenBase() + fastOpenCookie.length + 3) & ~3);
            header.optionByte(i, fastOpenExperimental ? TcpOption.EXPERIMENTAL : TcpOption.FAST_OPEN)
                .optionByte(i + 1, fastOpenBase() + fastOpenCookie.length);
            if (fastOpenExperimental) {
                header.option16(i + 2, TcpOption.FAST_OPEN_MAGIC);
            }
            i += fastOpenBase();
            for (byte b : fastOpenCookie) {
                header.optionByte(i++, b & 0xFF);
            }
            while (i < end) {
                header.optionByte(i++, TcpOption.NOP);
            }
        }
    }

    private int timestamp(TcpHeader header, int i) {
        header.optionByte(i, TcpOption.TIMESTAMP).optionByte(i + 1, TcpOption.TIMESTAMP_LENGTH).option32(i + 2, tsVal)
            .option32(i + 6, tsEcr);
        return i + 10;
    }

    /** Computes the checksum of the emitted header plus {@link #payloadLength} bytes following it. */
    public static void fillChecksum(TcpHeader header, int source, int destination, int segmentLength) {
        header.checksum(0);
        final MemorySegment segment = header.segment();
        final long sum = InternetChecksum.pseudoHeader(source, destination, 6, segmentLength);
        header.checksum(InternetChecksum.finish(InternetChecksum.add(sum, segment, header.base(), segmentLength)));
    }

    public TcpRepr withSeq(int value) {
        return new TcpRepr(sourcePort, destinationPort, value, ack, flags, window, mss, windowScale, sackPermitted,
            timestamp, tsVal, tsEcr, sackBlocks, payloadLength, fastOpenCookie, fastOpenExperimental);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TcpRepr r && r.sourcePort == sourcePort && r.destinationPort == destinationPort
            && r.seq == seq && r.ack == ack && r.flags == flags && r.window == window && r.mss == mss
            && r.windowScale == windowScale && r.sackPermitted == sackPermitted && r.timestamp == timestamp
            && (!timestamp || (r.tsVal == tsVal && r.tsEcr == tsEcr)) && Arrays.equals(r.sackBlocks, sackBlocks)
            && r.payloadLength == payloadLength && Arrays.equals(r.fastOpenCookie, fastOpenCookie)
            && (fastOpenCookie == null || r.fastOpenExperimental == fastOpenExperimental);
    }

    @Override
    public int hashCode() {
        return seq * 31 + ack;
    }

    /** tcpdump-like: {@code 49152 > 80 [S.] seq 1 ack 2 win 65535 <mss 1460,sackOK,TS 5:0,wscale 7> len 0}. */
    @Override
    public String toString() {
        final StringBuilder text = new StringBuilder().append(sourcePort).append(" > ").append(destinationPort)
            .append(' ').append(TcpFlags.format(flags)).append(" seq ").append(Integer.toUnsignedString(seq));
        if ((flags & TcpFlags.ACK) != 0) {
            text.append(" ack ").append(Integer.toUnsignedString(ack));
        }
        text.append(" win ").append(window);
        final StringBuilder options = new StringBuilder();
        if (mss >= 0) {
            options.append("mss ").append(mss).append(',');
        }
        if (sackPermitted) {
            options.append("sackOK,");
        }
        if (timestamp) {
            options.append("TS ").append(Integer.toUnsignedString(tsVal)).append(':')
                .append(Integer.toUnsignedString(tsEcr)).append(',');
        }
        if (windowScale >= 0) {
            options.append("wscale ").append(windowScale).append(',');
        }
        for (int i = 0; i + 1 < sackBlocks.length; i += 2) {
            options.append("sack ").append(Integer.toUnsignedString(sackBlocks[i])).append('-')
                .append(Integer.toUnsignedString(sackBlocks[i + 1])).append(',');
        }
        if (fastOpenCookie != null) {
            options.append(fastOpenExperimental ? "FOEXP" : "FO");
            if (fastOpenCookie.length > 0) {
                options.append(' ').append(java.util.HexFormat.of().formatHex(fastOpenCookie));
            }
            options.append(',');
        }
        if (!options.isEmpty()) {
            text.append(" <").append(options, 0, options.length() - 1).append('>');
        }
        return text.append(" len ").append(payloadLength).toString();
    }
}
