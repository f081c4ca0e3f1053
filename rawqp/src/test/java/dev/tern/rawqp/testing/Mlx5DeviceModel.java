package dev.tern.rawqp.testing;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.FramePool;
import dev.tern.rawqp.ffm.Mlx5DvLayouts;
import dev.tern.rawqp.mlx5.Mlx5Cqe64;
import dev.tern.rawqp.mlx5.Mlx5DataSegment;
import dev.tern.rawqp.mlx5.Mlx5Rings;
import dev.tern.rawqp.mlx5.Mlx5SendWqe;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * A software stand-in for the device side of an mlx5 raw-packet QP, so that the real Java data path
 * ({@code Mlx5Link} with its {@code SendQueue}, {@code ReceiveQueue}, {@code CompletionQueue}) can run without
 * hardware. It owns the memory libmlx5 would have set up (SQ and RQ buffers, QP doorbell record, a BlueFlame
 * "register", two CQs with their doorbell records) and does what the rawqp.md protocol says the NIC does:
 *
 * <ul>
 *   <li>reads the send doorbell record and consumes WQEs up to it, never beyond; checks each WQE's control segment
 *       (index, QPN, opcode, ds), Ethernet segment (inline size at least the L2 minimum) and data segments
 *       (lkey and address inside the registered slab); when caught up, checks that the BlueFlame register holds
 *       the first 8 bytes of the last WQE's control segment;</li>
 *   <li>assembles each frame (inline bytes + gathered data), performs checksum offload and TSO segmentation as the
 *       WQE asks, and puts the frames on a lossless loopback wire;</li>
 *   <li>writes a send CQE (opcode REQ, {@code wqe_counter} = the WQE's index) only for WQEs that asked
 *       ({@code CQ_UPDATE}): completion moderation;</li>
 *   <li>delivers wire frames into posted receive WQEs (up to the receive doorbell record), writing receive CQEs
 *       with the byte count, the RQ counter and checksum verdicts ({@code L3_OK}/{@code L4_OK}, IPv4);</li>
 *   <li>writes every CQE body first and its {@code op_own} last with release ordering, with the owner bit equal to
 *       the parity of the pass over the ring; refuses to overwrite an entry software has not released through the
 *       CQ doorbell record (a real CQ would overrun and go to error: recorded as a violation);</li>
 *   <li>on request fails the next send WQE (REQ_ERR with a syndrome) and then flushes every later one with
 *       WR_FLUSH_ERR, as a QP in error does.</li>
 * </ul>
 *
 * <p>What this does not model: real concurrency (the model runs when the test calls {@link #step}, on the test's
 * thread), PCIe ordering, write combining, CQE compression, steering. So it tests ordering logic and formats,
 * not hardware timing. Anything that breaks the protocol is recorded in {@link #violations()}; tests assert it is
 * empty. Allocation-free while nothing is violated.
 */
public final class Mlx5DeviceModel implements AutoCloseable {
    private static final VarHandle BE_INT = ValueLayout.JAVA_INT.withOrder(ByteOrder.BIG_ENDIAN).varHandle();
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    private static final int ETH_HEADER = 14;
    private static final int ETHER_TYPE_IPV4 = 0x0800;
    private static final int TCP = 6;
    private static final int UDP = 17;
    private static final int TCP_FIN_PSH = 0x09;

    /**
     * Sizes and identities of the modelled QP.
     *
     * @param sendBlocks     SQ basic blocks (power of two)
     * @param receiveWqes    RQ entries (power of two)
     * @param receiveStride  bytes per RQ entry (16 or more, power of two)
     * @param sendCqes       send CQ entries
     * @param receiveCqes    receive CQ entries
     * @param cqeSize        64 or 128
     * @param startIndex     the counter value every ring starts at (0 on hardware)
     * @param wireFrames     frames the loopback wire holds
     */
    public record Config(int qpn, int lkey, int sendBlocks, int receiveWqes, int receiveStride, int sendCqes, int receiveCqes, int cqeSize,
                         int startIndex, int wireFrames) {
        public static Config small(int startIndex) {
            return new Config(0x1234, 0x5678, 64, 64, 16, 64, 64, 64, startIndex, 1024);
        }
    }

    private final Config config;
    private final FramePool slab;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment sendQueue;
    private final MemorySegment receiveQueue;
    private final MemorySegment qpDoorbell;
    private final MemorySegment blueFlame;
    private final MemorySegment sendCq;
    private final MemorySegment sendCqDoorbell;
    private final MemorySegment receiveCq;
    private final MemorySegment receiveCqDoorbell;
    private final Mlx5Rings rings;

    private final MemorySegment assembly;
    private final MemorySegment segmentScratch;
    private final MemorySegment wire;
    private final int wireSlot;
    private final int[] wireLength;
    private int wireHead;
    private int wireTail;

    private final Mlx5SendWqe wqe = new Mlx5SendWqe();
    private final Mlx5Cqe64 cqe = new Mlx5Cqe64();
    private int sqConsumer;
    private int rqConsumer;
    private int sendCqProducer;
    private int receiveCqProducer;
    private long lastConsumedControl;
    private int failNextSyndrome = -1;
    private boolean inError;

    private long wqesConsumed;
    private long framesSent;
    private long sendCqes;
    private long sendErrorCqes;
    private long receiveCqes;
    private long segmentsCut;
    private final List<String> violations = new ArrayList<>();

    /** A model QP over {@code slab}, the registered memory (its lkey is {@code config.lkey()}). */
    public Mlx5DeviceModel(Config config, FramePool slab) {
        this.config = config;
        this.slab = slab;
        this.sendQueue = arena.allocate((long) config.sendBlocks() * Mlx5SendWqe.BASIC_BLOCK_SIZE, 4096);
        this.receiveQueue = arena.allocate((long) config.receiveWqes() * config.receiveStride(), 4096);
        this.qpDoorbell = arena.allocate(64, 64).asSlice(0, 8);
        this.blueFlame = arena.allocate(64, 64).asSlice(0, 8);
        this.sendCq = arena.allocate((long) config.sendCqes() * config.cqeSize(), 4096);
        this.sendCqDoorbell = arena.allocate(64, 64).asSlice(0, 4);
        this.receiveCq = arena.allocate((long) config.receiveCqes() * config.cqeSize(), 4096);
        this.receiveCqDoorbell = arena.allocate(64, 64).asSlice(0, 4);
        // Stale bytes everywhere, as in reused memory; CQ entries start INVALID like libmlx5's mlx5_alloc_cq_buf.
        for (MemorySegment memory : List.of(sendQueue, receiveQueue, sendCq, receiveCq)) {
            memory.fill((byte) 0xA5);
        }
        invalidate(sendCq, config.sendCqes());
        invalidate(receiveCq, config.receiveCqes());
        this.sqConsumer = config.startIndex();
        this.rqConsumer = config.startIndex();
        this.sendCqProducer = config.startIndex();
        this.receiveCqProducer = config.startIndex();
        BE_INT.setRelease(qpDoorbell, Mlx5DvLayouts.MLX5_RCV_DBR * 4L, config.startIndex() & 0xFFFF);
        BE_INT.setRelease(qpDoorbell, Mlx5DvLayouts.MLX5_SND_DBR * 4L, config.startIndex() & 0xFFFF);
        BE_INT.setRelease(sendCqDoorbell, 0L, config.startIndex() & 0xFF_FFFF);
        BE_INT.setRelease(receiveCqDoorbell, 0L, config.startIndex() & 0xFF_FFFF);
        // Room for frames a little longer than the receive buffers, to exercise LOCAL_LENGTH errors.
        this.wireSlot = Math.max((slab.bufferSize() + 63) & -64, 4096);
        this.wire = arena.allocate((long) wireSlot * config.wireFrames(), 64);
        this.wireLength = new int[config.wireFrames()];
        this.assembly = arena.allocate(Math.max(wireSlot, 65536 + 4096), 64);
        this.segmentScratch = arena.allocate(wireSlot, 64);
        this.rings = new Mlx5Rings(config.qpn(), sendQueue, config.sendBlocks(), receiveQueue, config.receiveWqes(), config.receiveStride(),
            qpDoorbell, blueFlame,
            new Mlx5Rings.Cq(sendCq, config.sendCqes(), config.cqeSize(), sendCqDoorbell),
            new Mlx5Rings.Cq(receiveCq, config.receiveCqes(), config.cqeSize(), receiveCqDoorbell));
    }

    private void invalidate(MemorySegment cq, int count) {
        for (int i = 0; i < count; i++) {
            cqe.wrap(cq, cqeBase(i)).opOwn(Mlx5Cqe64.OPCODE_INVALID, 0);
        }
    }

    private long cqeBase(int index) {
        return (long) index * config.cqeSize() + (config.cqeSize() == 128 ? 64 : 0);
    }

    /** The memory to give the link under test. */
    public Mlx5Rings rings() {
        return rings;
    }

    /** Makes the next consumed send WQE fail with {@code syndrome}; later WQEs are flushed. */
    public void failNextSend(int syndrome) {
        failNextSyndrome = syndrome;
    }

    /** Puts a frame on the wire as if it came from a peer. */
    public void inject(byte[] frame) {
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, assembly, 0, frame.length);
        toWire(assembly, frame.length);
    }

    /** Consumes up to {@code maxWqes} doorbelled send WQEs, then delivers what the wire holds into posted receive WQEs. */
    public void step(int maxWqes) {
        consumeSends(maxWqes);
        deliver();
    }

    /** Runs until nothing more can happen now. */
    public void run() {
        step(Integer.MAX_VALUE);
    }

    private void consumeSends(int maxWqes) {
        final int doorbell = (int) BE_INT.getAcquire(qpDoorbell, Mlx5DvLayouts.MLX5_SND_DBR * 4L) & 0xFFFF;
        int budget = maxWqes;
        boolean consumedAny = false;
        while (((doorbell - sqConsumer) & 0xFFFF) != 0 && budget-- > 0) {
            consumeOneWqe();
            consumedAny = true;
        }
        if (consumedAny && ((doorbell - sqConsumer) & 0xFFFF) == 0) {
            final long rung = (long) VarHandleHolder.LONG.getVolatile(blueFlame, 0L);
            if (rung != lastConsumedControl) {
                violation("BlueFlame register holds " + Long.toHexString(rung) + ", not the last WQE's control qword "
                    + Long.toHexString(lastConsumedControl));
            }
        }
    }

    /** Native-order 64-bit access for the BlueFlame value, as the link writes it. */
    private static final class VarHandleHolder {
        static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    }

    private void consumeOneWqe() {
        final int slot = sqConsumer & (config.sendBlocks() - 1);
        wqe.wrap(sendQueue, (long) slot * Mlx5SendWqe.BASIC_BLOCK_SIZE);
        lastConsumedControl = wqe.controlQword();
        final int index = sqConsumer & 0xFFFF;
        final int ds = wqe.ds();
        final int blocks = Math.max(1, Mlx5SendWqe.basicBlocks(ds));
        final boolean signalled = (wqe.fmCeSe() & Mlx5SendWqe.CTRL_CQ_UPDATE) != 0;
        wqesConsumed++;
        sqConsumer += blocks;
        if (inError) {
            // A QP in error flushes every WQE, each with its own error CQE.
            writeCqe(sendCq, config.sendCqes(), sendCqDoorbell, true, Mlx5Cqe64.OPCODE_REQ_ERR, 0, index, 0, 0,
                Mlx5Cqe64.SYNDROME_WR_FLUSH_ERR);
            sendErrorCqes++;
            return;
        }
        if (wqe.wqeIndex() != index || wqe.qpn() != config.qpn() || wqe.opcodeModifier() != 0) {
            violation("WQE at " + index + ": index " + wqe.wqeIndex() + ", qpn " + wqe.qpn() + ", opmod " + wqe.opcodeModifier());
            fail(index, Mlx5Cqe64.SYNDROME_LOCAL_QP_OP_ERR);
            return;
        }
        if (failNextSyndrome >= 0) {
            final int syndrome = failNextSyndrome;
            failNextSyndrome = -1;
            fail(index, syndrome);
            return;
        }
        final int opcode = wqe.opcode();
        final int inline = wqe.inlineHeaderSize();
        final int ethernetDs = Mlx5SendWqe.ethernetDs(inline);
        final int dataSegments = ds - 1 - ethernetDs;
        if ((opcode != Mlx5SendWqe.OPCODE_SEND && opcode != Mlx5SendWqe.OPCODE_TSO) || inline < Mlx5SendWqe.MIN_INLINE_HEADER_SIZE
            || dataSegments < 0 || (ds + 3) / 4 > config.sendBlocks()) {
            violation("WQE at " + index + ": opcode " + opcode + ", inline " + inline + ", ds " + ds);
            fail(index, Mlx5Cqe64.SYNDROME_LOCAL_QP_OP_ERR);
            return;
        }
        if (opcode == Mlx5SendWqe.OPCODE_SEND && wqe.mss() != 0) {
            violation("SEND WQE at " + index + " has mss " + wqe.mss() + " (the header says it must be 0)");
        }
        wqe.copyInline(assembly, 0, inline);
        int length = inline;
        for (int d = 0; d < dataSegments; d++) {
            final int dsIndex = 1 + ethernetDs + d;
            final int bytes = wqe.dataByteCount(dsIndex);
            final long offset = slabOffset(wqe.dataLkey(dsIndex), wqe.dataAddress(dsIndex), bytes);
            if (offset < 0 || length + bytes > assembly.byteSize()) {
                violation("WQE at " + index + ": data segment " + d + " outside the registered memory");
                fail(index, Mlx5Cqe64.SYNDROME_LOCAL_PROT_ERR);
                return;
            }
            MemorySegment.copy(slab.slab(), offset, assembly, length, bytes);
            length += bytes;
        }
        final int csFlags = wqe.checksumFlags();
        if (opcode == Mlx5SendWqe.OPCODE_TSO) {
            segment(length, inline, wqe.mss());
        } else {
            offloadChecksums(assembly, 0, length, csFlags);
            toWire(assembly, length);
        }
        if (signalled) {
            writeCqe(sendCq, config.sendCqes(), sendCqDoorbell, true, Mlx5Cqe64.OPCODE_REQ, 0, index, 0, 0, 0);
            sendCqes++;
        }
    }

    private void fail(int index, int syndrome) {
        inError = true;
        writeCqe(sendCq, config.sendCqes(), sendCqDoorbell, true, Mlx5Cqe64.OPCODE_REQ_ERR, 0, index, 0, 0, syndrome);
        sendErrorCqes++;
    }

    /** Offset in the slab of {@code [address, address + length)}, or -1 when the lkey or range is wrong. */
    private long slabOffset(int lkey, long address, int length) {
        final long offset = address - slab.slab().address();
        if (lkey != config.lkey() || length <= 0 || offset < 0 || offset + length > slab.slab().byteSize()) {
            return -1;
        }
        return offset;
    }

    /** TSO: cuts the TCP payload after the inlined headers into mss-sized segments, fixing lengths, ids, sequence numbers, flags and checksums. */
    private void segment(int length, int headers, int mss) {
        final int ip = ETH_HEADER;
        final int tcp = ip + (BigEndian.u8(assembly, ip) & 0xF) * 4;
        final int payload = length - headers;
        if (mss <= 0 || BigEndian.u16(assembly, 12) != ETHER_TYPE_IPV4 || BigEndian.u8(assembly, ip + 9) != TCP || payload <= 0) {
            violation("TSO WQE that is not one IPv4 TCP frame with payload (mss " + mss + ")");
            return;
        }
        final int firstId = BigEndian.u16(assembly, ip + 4);
        final int firstSeq = BigEndian.i32(assembly, tcp + 4);
        final int flags = BigEndian.u8(assembly, tcp + 13);
        for (int offset = 0, k = 0; offset < payload; offset += mss, k++) {
            final int chunk = Math.min(mss, payload - offset);
            final boolean last = offset + chunk == payload;
            if (headers + chunk > segmentScratch.byteSize()) {
                violation("TSO segment of " + (headers + chunk) + " bytes does not fit a wire slot");
                return;
            }
            final MemorySegment out = segmentScratch;
            MemorySegment.copy(assembly, 0, out, 0, headers);
            MemorySegment.copy(assembly, headers + offset, out, headers, chunk);
            BigEndian.u16(out, ip + 2, headers - ip + chunk);
            BigEndian.u16(out, ip + 4, firstId + k);
            BigEndian.i32(out, tcp + 4, firstSeq + offset);
            BigEndian.u8(out, tcp + 13, last ? flags : flags & ~TCP_FIN_PSH);
            offloadChecksums(out, 0, headers + chunk, Mlx5SendWqe.ETH_L3_CSUM | Mlx5SendWqe.ETH_L4_CSUM);
            toWireFrom(out, 0, headers + chunk);
            segmentsCut++;
        }
    }

    /** What the NIC does for cs_flags: the IPv4 header checksum, and the TCP/UDP checksum over the pseudo-header (ignoring what the field held). */
    private static void offloadChecksums(MemorySegment frame, long at, int length, int csFlags) {
        if (length < ETH_HEADER + 20 || BigEndian.u16(frame, at + 12) != ETHER_TYPE_IPV4) {
            return;
        }
        final long ip = at + ETH_HEADER;
        final int ihl = (BigEndian.u8(frame, ip) & 0xF) * 4;
        if ((csFlags & Mlx5SendWqe.ETH_L3_CSUM) != 0) {
            BigEndian.u16(frame, ip + 10, 0);
            BigEndian.u16(frame, ip + 10, InternetChecksum.compute(frame, ip, ihl));
        }
        final int protocol = BigEndian.u8(frame, ip + 9);
        final long l4 = ip + ihl;
        final int l4Length = BigEndian.u16(frame, ip + 2) - ihl;
        final int field = protocol == TCP ? 16 : protocol == UDP ? 6 : -1;
        if ((csFlags & Mlx5SendWqe.ETH_L4_CSUM) != 0 && field >= 0 && l4Length >= field + 2 && l4 + l4Length <= at + length) {
            BigEndian.u16(frame, l4 + field, 0);
            final long sum = InternetChecksum.add(InternetChecksum.pseudoHeader(BigEndian.i32(frame, ip + 12), BigEndian.i32(frame, ip + 16),
                protocol, l4Length), frame, l4, l4Length);
            BigEndian.u16(frame, l4 + field, InternetChecksum.finish(sum));
        }
    }

    /** hds_ip_ext for a received frame: L2 always, L3/L4 OK when the checksums verify. */
    private static int checksumVerdict(MemorySegment frame, long at, int length) {
        if (length < ETH_HEADER + 20 || BigEndian.u16(frame, at + 12) != ETHER_TYPE_IPV4) {
            return Mlx5Cqe64.L2_OK;
        }
        final long ip = at + ETH_HEADER;
        final int ihl = (BigEndian.u8(frame, ip) & 0xF) * 4;
        int verdict = Mlx5Cqe64.L2_OK;
        if (InternetChecksum.verifies(InternetChecksum.add(0, frame, ip, ihl))) {
            verdict |= Mlx5Cqe64.L3_OK;
        }
        final int protocol = BigEndian.u8(frame, ip + 9);
        final int l4Length = BigEndian.u16(frame, ip + 2) - ihl;
        if ((protocol == TCP || protocol == UDP) && l4Length > 0 && ip + ihl + l4Length <= at + length) {
            final long sum = InternetChecksum.add(InternetChecksum.pseudoHeader(BigEndian.i32(frame, ip + 12), BigEndian.i32(frame, ip + 16),
                protocol, l4Length), frame, ip + ihl, l4Length);
            if (InternetChecksum.verifies(sum)) {
                verdict |= Mlx5Cqe64.L4_OK;
            }
        }
        return verdict;
    }

    private void toWire(MemorySegment frame, int length) {
        toWireFrom(frame, 0, length);
    }

    private void toWireFrom(MemorySegment frame, long at, int length) {
        framesSent++;
        if (wireHead - wireTail == wireLength.length || length > wireSlot) {
            violation("loopback wire overflow or frame of " + length + " bytes longer than a slot of " + wireSlot);
            return;
        }
        final int slot = wireHead++ % wireLength.length;
        MemorySegment.copy(frame, at, wire, (long) slot * wireSlot, length);
        wireLength[slot] = length;
    }

    /** Delivers wire frames into posted receive WQEs while there are both. */
    private void deliver() {
        final int posted = (int) BE_INT.getAcquire(qpDoorbell, Mlx5DvLayouts.MLX5_RCV_DBR * 4L) & 0xFFFF;
        while (wireTail != wireHead && ((posted - rqConsumer) & 0xFFFF) != 0) {
            final int slot = wireTail++ % wireLength.length;
            final long frame = (long) slot * wireSlot;
            final int length = wireLength[slot];
            final long entry = (long) (rqConsumer & (config.receiveWqes() - 1)) * config.receiveStride();
            final int index = rqConsumer & 0xFFFF;
            rqConsumer++;
            final int capacity = Mlx5DataSegment.byteCount(receiveQueue, entry);
            final long offset = slabOffset(Mlx5DataSegment.lkey(receiveQueue, entry), Mlx5DataSegment.address(receiveQueue, entry), capacity);
            if (config.receiveStride() > Mlx5DataSegment.SIZE
                && Mlx5DataSegment.lkey(receiveQueue, entry + Mlx5DataSegment.SIZE) != Mlx5DataSegment.INVALID_LKEY) {
                violation("receive WQE " + index + " has room for more scatter entries but no INVALID_LKEY terminator");
            }
            if (offset < 0) {
                violation("receive WQE " + index + " points outside the registered memory");
                writeCqe(receiveCq, config.receiveCqes(), receiveCqDoorbell, false, Mlx5Cqe64.OPCODE_RESP_ERR, 0, index, 0, 0,
                    Mlx5Cqe64.SYNDROME_LOCAL_PROT_ERR);
                continue;
            }
            if (length > capacity) {
                writeCqe(receiveCq, config.receiveCqes(), receiveCqDoorbell, false, Mlx5Cqe64.OPCODE_RESP_ERR, 0, index, 0, 0,
                    Mlx5Cqe64.SYNDROME_LOCAL_LENGTH_ERR);
                continue;
            }
            MemorySegment.copy(wire, frame, slab.slab(), offset, length);
            final int verdict = checksumVerdict(wire, frame, length);
            final int l3 = length >= ETH_HEADER && BigEndian.u16(wire, frame + 12) == ETHER_TYPE_IPV4
                ? Mlx5Cqe64.L3_HDR_TYPE_IPV4 : Mlx5Cqe64.L3_HDR_TYPE_NONE;
            writeCqe(receiveCq, config.receiveCqes(), receiveCqDoorbell, false, Mlx5Cqe64.OPCODE_RESP_SEND, length, index, verdict, l3, 0);
            receiveCqes++;
        }
    }

    private void writeCqe(MemorySegment cq, int count, MemorySegment doorbell, boolean send, int opcode, int byteCount, int wqeCounter,
                          int hdsIpExt, int l3Type, int syndrome) {
        final int producer = send ? sendCqProducer : receiveCqProducer;
        final int released = (int) BE_INT.getAcquire(doorbell, 0L) & 0xFF_FFFF;
        if (((producer - released) & 0xFF_FFFF) >= count) {
            violation((send ? "send" : "receive") + " CQ overrun: producer " + producer + ", consumer index released " + released);
        }
        final long base = cqeBase(producer & (count - 1));
        cqe.wrap(cq, base).clearBody().byteCount(byteCount).wqeCounter(wqeCounter).checksumStatus(hdsIpExt, l3Type).syndrome(syndrome, 0);
        // The body must be visible before op_own hands the entry to software.
        final int owner = (producer & count) != 0 ? 1 : 0;
        BYTE.setRelease(cq, base + Mlx5Cqe64.OP_OWN_OFFSET, (byte) (opcode << 4 | owner));
        if (send) {
            sendCqProducer++;
        } else {
            receiveCqProducer++;
        }
    }

    private void violation(String what) {
        // Keep failure messages readable: the first few say what went wrong, the count says how often.
        if (violations.size() < 10) {
            violations.add(what);
        } else if (violations.size() == 10) {
            violations.add("... more violations follow");
        }
    }

    /** Protocol violations seen so far; a correct driver leaves this empty. */
    public List<String> violations() {
        return violations;
    }

    /** Frames waiting on the loopback wire (no receive WQE free for them yet). */
    public int framesOnWire() {
        return wireHead - wireTail;
    }

    public long wqesConsumed() {
        return wqesConsumed;
    }

    /** Frames put on the wire, TSO segments counted one by one. */
    public long framesSent() {
        return framesSent;
    }

    public long sendCqes() {
        return sendCqes;
    }

    public long sendErrorCqes() {
        return sendErrorCqes;
    }

    public long receiveCqes() {
        return receiveCqes;
    }

    public long segmentsCut() {
        return segmentsCut;
    }

    /** Completed passes over the send CQ: each one flipped the owner bit the device writes. */
    public int sendCqLaps() {
        return (sendCqProducer - config.startIndex()) / config.sendCqes();
    }

    public int receiveCqLaps() {
        return (receiveCqProducer - config.startIndex()) / config.receiveCqes();
    }

    /** Send-queue basic blocks consumed so far. */
    public int sendBlocksConsumed() {
        return sqConsumer - config.startIndex();
    }

    /** The send doorbell record as the device reads it. */
    public int sendDoorbellRecord() {
        return (int) BE_INT.getAcquire(qpDoorbell, Mlx5DvLayouts.MLX5_SND_DBR * 4L);
    }

    /** The receive doorbell record as the device reads it. */
    public int receiveDoorbellRecord() {
        return (int) BE_INT.getAcquire(qpDoorbell, Mlx5DvLayouts.MLX5_RCV_DBR * 4L);
    }

    /** The last value written to the BlueFlame register. */
    public long blueFlameValue() {
        return (long) VarHandleHolder.LONG.getVolatile(blueFlame, 0L);
    }

    public boolean inError() {
        return inError;
    }

    @Override
    public void close() {
        arena.close();
    }
}
