package dev.tern.core.memory;

import dev.tern.core.sys.Libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Off-heap memory taken from the operating system by the page, so that it costs resident memory only where it is
 * touched and can be handed back while its addresses stay valid: Linux's {@code mmap} (anonymous, private),
 * {@code madvise(MADV_DONTNEED)} and {@code mincore}, through core's {@link Libc}.
 *
 * <p>Why not {@link Arena#allocate}: it zeroes what it allocates, which makes every page resident at once, and it
 * gives memory back only when the whole arena closes. A socket buffer of 128 KiB that carried one HTTP request would
 * keep 128 KiB resident for the life of the process. Mapped memory is zero-filled by the kernel on first touch, and
 * {@link #discard} returns the pages of a buffer nobody uses (the next touch faults in zeroed pages again).
 *
 * <p>A mapping belongs to an {@link Arena} (usually a shared one): the segment is valid only while that arena is
 * open, accesses after it closed fail with an exception instead of touching unmapped memory, and closing it unmaps.
 *
 * <p>Where the calls cannot be bound (not Linux), {@link #available()} is false and {@link #map} falls back to
 * {@code arena.allocate}; {@link #discard} then does nothing and {@link #residentBytes} reports every byte.
 *
 * <p>Cold path only: mapping, discarding and counting are system calls; none of them runs per packet.
 */
public final class PageMemory {
    private static final int PROT_READ = 0x1;
    private static final int PROT_WRITE = 0x2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MAP_NORESERVE = 0x4000;
    private static final int MADV_DONTNEED = 4;

    /** True when the calls are bound: Linux, with native access granted. */
    private static final boolean AVAILABLE;
    private static final int PAGE_SIZE;

    static {
        boolean available = false;
        int pageSize = 4096;
        if (System.getProperty("os.name", "").startsWith("Linux")) {
            try {
                pageSize = Libc.pageSize();
                available = true;
            } catch (LinkageError unavailable) {
                // Not bindable here (no native access granted, an unusual libc): fall back to arena memory.
            }
        }
        AVAILABLE = available;
        PAGE_SIZE = pageSize;
    }

    private PageMemory() {
    }

    /** True when memory comes from {@code mmap} and can be discarded page by page. */
    public static boolean available() {
        return AVAILABLE;
    }

    public static int pageSize() {
        return PAGE_SIZE;
    }

    /**
     * {@code bytes} (a multiple of the page size) of zeroed, page-aligned memory, resident only once touched, valid
     * while {@code arena} is open and unmapped when it closes. Throws {@link OutOfMemoryError} when the system
     * refuses the mapping.
     */
    public static MemorySegment map(long bytes, Arena arena) {
        if (bytes <= 0 || bytes % PAGE_SIZE != 0) {
            throw new IllegalArgumentException("a mapping is a positive multiple of " + PAGE_SIZE + " bytes: " + bytes);
        }
        if (!AVAILABLE) {
            return arena.allocate(bytes, PAGE_SIZE);
        }
        final long address;
        final int errno;
        try (Arena call = Arena.ofConfined()) {
            final MemorySegment state = Libc.newCallState(call);
            address = Libc.mmap(state, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0L);
            errno = Libc.errno(state);
        }
        if (address == -1L || address == 0L) {
            throw new OutOfMemoryError("mmap of " + bytes + " bytes refused by the system: " + Libc.errnoName(errno));
        }
        return MemorySegment.ofAddress(address).reinterpret(bytes, arena, PageMemory::unmap);
    }

    private static void unmap(MemorySegment mapping) {
        try (Arena call = Arena.ofConfined()) {
            Libc.munmap(Libc.newCallState(call), mapping.address(), mapping.byteSize());
        }
    }

    /**
     * Hands the whole pages inside {@code memory} back to the system; they read as zeros when next touched. Bytes
     * of a partial page at either end are left as they are. Returns the bytes discarded.
     */
    public static long discard(MemorySegment memory) {
        if (!AVAILABLE) {
            return 0;
        }
        final long start = alignUp(memory.address());
        final long end = memory.address() + memory.byteSize() & -(long) PAGE_SIZE;
        return end <= start ? 0 : discard(start, end - start);
    }

    /**
     * Hands {@code length} bytes of whole pages from {@code address} (page-aligned) back to the system. One call for
     * many adjacent pages costs about what one for a page costs: the system flushes the other threads' address
     * translations once per call (an interrupt to each core running this process; about 45 µs a call on a 2-vCPU VM
     * with a second thread running, against 0.3 µs a page within one call). Returns the bytes discarded.
     */
    public static long discard(long address, long length) {
        if (!AVAILABLE || length <= 0) {
            return 0;
        }
        if ((address | length) % PAGE_SIZE != 0) {
            throw new IllegalArgumentException("not whole pages: " + Long.toHexString(address) + " + " + length);
        }
        try (Arena call = Arena.ofConfined()) {
            return Libc.madvise(Libc.newCallState(call), address, length, MADV_DONTNEED) == 0 ? length : 0;
        }
    }

    /** Bytes of {@code memory}'s whole pages that are resident now (every byte where that cannot be asked). */
    public static long residentBytes(MemorySegment memory) {
        if (!AVAILABLE) {
            return memory.byteSize();
        }
        final long start = memory.address() & -(long) PAGE_SIZE;
        final long end = alignUp(memory.address() + memory.byteSize());
        final int pages = (int) ((end - start) / PAGE_SIZE);
        try (Arena call = Arena.ofConfined()) {
            final MemorySegment vector = call.allocate(pages);
            if (Libc.mincore(Libc.newCallState(call), start, end - start, vector) != 0) {
                return memory.byteSize();
            }
            long resident = 0;
            for (int i = 0; i < pages; i++) {
                if ((vector.get(ValueLayout.JAVA_BYTE, i) & 1) != 0) {
                    resident += PAGE_SIZE;
                }
            }
            return resident;
        }
    }

    private static long alignUp(long address) {
        return address + PAGE_SIZE - 1 & -(long) PAGE_SIZE;
    }
}
