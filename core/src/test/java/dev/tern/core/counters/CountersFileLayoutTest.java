package dev.tern.core.counters;

import dev.tern.core.testing.OffHeapLayout;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The counters file header's fields do not overlap, are aligned and fit in its header (see OffHeapLayout). */
class CountersFileLayoutTest {
    @Test
    void headerFieldsAreDisjointAlignedAndInsideTheHeader() {
        final List<OffHeapLayout.Slot> fields = OffHeapLayout.fields(CountersFile.class, name -> true);
        assertTrue(fields.size() >= 7, fields::toString);
        assertEquals(List.of(), OffHeapLayout.problems(fields, CountersFile.HEADER_LENGTH));
    }
}
