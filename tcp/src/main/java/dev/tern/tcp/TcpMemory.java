package dev.tern.tcp;

/**
 * Where a {@link TcpLayer}'s memory is, in bytes.
 *
 * @param connections       rows in use
 * @param tableBytes        the control block table (all rows, off-heap address space)
 * @param tableResident     of {@code tableBytes}, the bytes resident now (rows ever taken; asked of the system)
 * @param ringsAllocated    ring and sent-segment record memory mapped from the system (off-heap address space)
 * @param ringsInUse        ring and record bytes reserved by connections (what the memory budget counts), whether
 *                          attached yet or not
 * @param ringsAttached     of those, the bytes whose rings and records are attached now (a connection takes them when
 *                          it first needs them)
 * @param lookupBytes       the 4-tuple hash table (on heap)
 * @param reassemblyBytes   out-of-order range blocks (off-heap)
 * @param perSlotHeapBytes  per-slot arrays on the heap (ring references, sizes, queues)
 * @param ringsResident     of {@code ringsAllocated}, the bytes resident in memory now (pages touched and not handed
 *                          back; asked of the system page by page)
 */
public record TcpMemory(int connections, long tableBytes, long tableResident, long ringsAllocated, long ringsInUse,
                        long ringsAttached, long lookupBytes,
                        long reassemblyBytes, long perSlotHeapBytes, long ringsResident) {
    /**
     * Heap bytes per slot in the rooms' arrays: six compressed references (two rings, the record, the trace, the
     * owner, the receive handler), four ints (two buffer sizes, two queue entries), a long and two booleans.
     */
    static final int PER_SLOT_HEAP_BYTES = 6 * 4 + 4 * 4 + 8 + 2;

    /** Where a layer's memory is now, from its table, lookup, reassembly pool, rings and buffer budget. */
    static TcpMemory of(TcpControlBlocks tcb, ConnectionTable connections, ReassemblyQueue reassembly, RingPool rings,
                        long reservedBytes) {
        return new TcpMemory(tcb.inUse(), (long) tcb.capacity() * TcpControlBlocks.ROW_BYTES, tcb.residentBytes(),
            rings.allocatedBytes(), reservedBytes, rings.inUseBytes(), connections.memoryBytes(),
            reassembly.memoryBytes(), (long) tcb.capacity() * PER_SLOT_HEAP_BYTES, rings.residentBytes());
    }

    /**
     * Bytes one connection costs: its row, its share of the lookup table and per-slot arrays, its rings and its
     * record of sent segments.
     */
    public long perConnection(int sendBuffer, int receiveBuffer, int maxConnections) {
        return TcpControlBlocks.ROW_BYTES + (lookupBytes + perSlotHeapBytes) / maxConnections + sendBuffer
            + receiveBuffer + 2L * RING_OBJECT_BYTES + recordBytes(sendBuffer) + RECORD_OBJECT_BYTES;
    }

    /** Off-heap bytes of the record of sent segments a connection with this send buffer gets. */
    public static long recordBytes(int sendBuffer) {
        return (long) SentSegments.entriesFor(sendBuffer) * SentSegments.ENTRY_BYTES;
    }

    /** Heap size of one {@code ByteRing} object with its padding and its memory segment (measured, rounded up). */
    public static final int RING_OBJECT_BYTES = 200;
    /** Heap size of one {@code SentSegments} object with its memory segment (rounded up). */
    public static final int RECORD_OBJECT_BYTES = 96;
}
