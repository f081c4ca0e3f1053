package dev.tern.tcp;

import dev.tern.core.testing.OffHeapLayout;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every off-heap record of the TCP module keeps a sound layout: no two fields overlap, each is aligned to its width,
 * each lies inside the record, and the record size keeps the next record aligned. Offsets are read from the
 * {@code *_OFFSET} constants and widths from the accesses in each class's source (OffHeapLayout), so the test
 * repeats no number: a field added later at a taken or misaligned offset fails here.
 */
class OffHeapLayoutsTest {
    @Test
    void controlBlockRowFieldsAreDisjointAlignedAndInsideTheRow() {
        final List<OffHeapLayout.Slot> fields = OffHeapLayout.fields(TcpControlBlocks.class, name -> true);
        assertTrue(fields.size() > 70, "found only " + fields.size() + " fields");
        assertEquals(List.of(), OffHeapLayout.problems(fields, TcpControlBlocks.ROW_BYTES));
        assertEquals(0, TcpControlBlocks.ROW_BYTES % 64, "rows stay on cache lines");
    }

    @Test
    void sentSegmentEntryFieldsAreDisjointAlignedAndInsideTheEntry() throws Exception {
        final List<OffHeapLayout.Slot> fields = OffHeapLayout.fields(SentSegments.class, name -> true);
        assertEquals(10, fields.size(), fields::toString);
        assertEquals(List.of(), OffHeapLayout.problems(fields, SentSegments.ENTRY_BYTES));
    }

    @Test
    void bbrStateFieldsAreDisjointAlignedAndInsideTheSlot() {
        final List<OffHeapLayout.Slot> fields = OffHeapLayout.fields(BbrState.class, name -> true);
        assertEquals(40, fields.size(), fields::toString);
        assertEquals(List.of(), OffHeapLayout.problems(fields, BbrState.SLOT_BYTES));
        assertEquals(0, BbrState.SLOT_BYTES % 64, "slots stay on cache lines");
    }

    @Test
    void reassemblyBlockHeaderAndRangeFieldsAreDisjointAlignedAndInside() throws Exception {
        final List<OffHeapLayout.Slot> header = OffHeapLayout.fields(ReassemblyQueue.class, name -> !name.startsWith("RANGE_"));
        final List<OffHeapLayout.Slot> range = OffHeapLayout.fields(ReassemblyQueue.class, name -> name.startsWith("RANGE_"));
        assertEquals(2, header.size(), header::toString);
        assertEquals(3, range.size(), range::toString);
        assertEquals(List.of(), OffHeapLayout.problems(header, constant(ReassemblyQueue.class, "HEADER_BYTES")));
        assertEquals(List.of(), OffHeapLayout.problems(range, constant(ReassemblyQueue.class, "RANGE_BYTES")));
    }

    static int constant(Class<?> owner, String name) throws ReflectiveOperationException {
        final java.lang.reflect.Field field = owner.getDeclaredField(name);
        field.setAccessible(true);
        return field.getInt(null);
    }
}
