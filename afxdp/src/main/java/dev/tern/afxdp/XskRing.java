package dev.tern.afxdp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * One AF_XDP ring shared with the kernel: a power-of-two array of entries between a producer and a consumer index.
 *
 * <pre>
 *   mapped ring (offsets from getsockopt(XDP_MMAP_OFFSETS), not fixed by the ABI)
 *   +-- producer (u32) --+-- consumer (u32) --+-- flags (u32) --+-- desc[size] --------------------------+
 *   | written by the     | written by the     | XDP_RING_NEED_  | fill/completion: u64 UMEM address       |
 *   | producing side     | consuming side     | WAKEUP (kernel) | RX/TX: struct xdp_desc {addr, len, opt} |
 *   +--------------------+--------------------+-----------------+-----------------------------------------+
 *   indices run freely and wrap at 2^32; entry i lives at desc[i &amp; (size - 1)]
 * </pre>
 *
 * <p>Tern produces on the fill and TX rings and consumes on the RX and completion rings. Each side caches the other's
 * index and rereads it only when the cache says there is no room (producer) or nothing (consumer), with acquire
 * ordering; it publishes its own index with release ordering after writing (or before reusing) the entries, so the
 * kernel never sees an index ahead of the entries it covers — the same pairing as libxdp's
 * {@code smp_load_acquire}/{@code smp_store_release}.
 *
 * <p>Owned by the link's shard thread; not thread-safe. Valid until the link closes its mapping.
 */
final class XskRing {
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final MemorySegment memory;
    private final long producerOffset;
    private final long consumerOffset;
    private final long flagsOffset;
    private final long descOffset;
    private final int entrySize;
    private final int size;
    private final int mask;
    private int cachedProducer;
    private int cachedConsumer;

    XskRing(MemorySegment memory, long producerOffset, long consumerOffset, long flagsOffset, long descOffset,
            int entrySize, int size) {
        if (Integer.bitCount(size) != 1) {
            throw new IllegalArgumentException("ring size must be a power of two, got " + size);
        }
        this.memory = memory;
        this.producerOffset = producerOffset;
        this.consumerOffset = consumerOffset;
        this.flagsOffset = flagsOffset;
        this.descOffset = descOffset;
        this.entrySize = entrySize;
        this.size = size;
        this.mask = size - 1;
        this.cachedProducer = (int) INT.getAcquire(memory, producerOffset);
        this.cachedConsumer = (int) INT.getAcquire(memory, consumerOffset);
    }

    int size() {
        return size;
    }

    MemorySegment memory() {
        return memory;
    }

    /** Byte offset in {@link #memory()} of entry {@code index} (a free-running index). */
    long entryOffset(int index) {
        return descOffset + (long) (index & mask) * entrySize;
    }

    // ---- producer side (fill, TX) ----

    /** Up to {@code wanted} free entries starting at {@link #producerIndex()}; rereads the consumer only when short. */
    int free(int wanted) {
        int free = size - (cachedProducer - cachedConsumer);
        if (free < wanted) {
            cachedConsumer = (int) INT.getAcquire(memory, consumerOffset);
            free = size - (cachedProducer - cachedConsumer);
        }
        return Math.min(free, wanted);
    }

    /** The index the next produced entry goes to. */
    int producerIndex() {
        return cachedProducer;
    }

    /** Publishes {@code count} entries written at {@link #producerIndex()} onward. */
    void submit(int count) {
        cachedProducer += count;
        INT.setRelease(memory, producerOffset, cachedProducer);
    }

    /** Entries produced and not yet taken by the consumer (as last seen). */
    int outstanding() {
        cachedConsumer = (int) INT.getAcquire(memory, consumerOffset);
        return cachedProducer - cachedConsumer;
    }

    // ---- consumer side (RX, completion) ----

    /** Up to {@code max} entries ready at {@link #consumerIndex()}; rereads the producer only when none are cached. */
    int available(int max) {
        int ready = cachedProducer - cachedConsumer;
        if (ready == 0) {
            cachedProducer = (int) INT.getAcquire(memory, producerOffset);
            ready = cachedProducer - cachedConsumer;
        }
        return Math.min(ready, max);
    }

    /** Consumer side: true when at least half the ring holds entries not yet consumed (rereads the producer). */
    boolean halfFull() {
        cachedProducer = (int) INT.getAcquire(memory, producerOffset);
        return cachedProducer - cachedConsumer >= size / 2;
    }

    /** The index of the next entry to consume. */
    int consumerIndex() {
        return cachedConsumer;
    }

    /** Hands {@code count} consumed entries back to the producer. */
    void release(int count) {
        cachedConsumer += count;
        INT.setRelease(memory, consumerOffset, cachedConsumer);
    }

    /** Whether the kernel asks for a syscall to make progress on this ring ({@code XDP_RING_NEED_WAKEUP}). */
    boolean needsWakeup() {
        return ((int) INT.getAcquire(memory, flagsOffset) & 1) != 0;
    }
}
