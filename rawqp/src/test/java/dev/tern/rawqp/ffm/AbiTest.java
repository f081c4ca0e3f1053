package dev.tern.rawqp.ffm;

import dev.tern.rawqp.mlx5.Mlx5Cqe64;
import dev.tern.rawqp.mlx5.Mlx5DataSegment;
import dev.tern.rawqp.mlx5.Mlx5SendWqe;
import dev.tern.rawqp.testing.CPrograms;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The hand-written bindings against the installed rdma-core headers: every constant annotated {@link CAbi} in the
 * binding and ring-format classes is printed by a C program that gcc compiles against {@code <infiniband/verbs.h>}
 * and {@code <infiniband/mlx5dv.h>}, and must equal the Java value; every annotated width must equal
 * {@code sizeof} the member. A field name gcc does not know fails the compile, which fails the test.
 */
class AbiTest {
    /** Every class whose constants describe C structs or header values. */
    private static final List<Class<?>> BINDING_CLASSES = List.of(VerbsLayouts.class, VerbsConstants.class, Mlx5DvLayouts.class,
        Mlx5SendWqe.class, Mlx5Cqe64.class, Mlx5DataSegment.class);
    private static final Pattern OFFSETOF = Pattern.compile("offsetof\\((struct \\w+),\\s*([\\w.\\[\\]]+)\\)");

    /** One Java constant and the C expression it claims to equal. */
    record Entry(String name, String expression, long javaValue, boolean javaIsInt, int width) {
    }

    private static List<Entry> entries;

    @BeforeAll
    static void collect() throws IllegalAccessException {
        entries = new ArrayList<>();
        for (Class<?> type : BINDING_CLASSES) {
            collect(type, entries);
        }
    }

    private static void collect(Class<?> type, List<Entry> into) throws IllegalAccessException {
        for (Field field : type.getDeclaredFields()) {
            final CAbi abi = field.getAnnotation(CAbi.class);
            if (abi == null || !Modifier.isStatic(field.getModifiers())) {
                continue;
            }
            field.setAccessible(true);
            final boolean isInt = field.getType() == int.class;
            final long value = isInt ? field.getInt(null) : field.getLong(null);
            into.add(new Entry(type.getSimpleName() + "." + field.getName(), abi.value(), value, isInt, abi.width()));
        }
        for (Class<?> nested : type.getDeclaredClasses()) {
            collect(nested, into);
        }
    }

    @Test
    void everyOffsetAndSizeConstantOfTheBindingsNamesItsCExpression() {
        final List<String> missing = new ArrayList<>();
        for (Class<?> type : BINDING_CLASSES) {
            unannotated(type, missing);
        }
        assertEquals(List.of(), missing, "binding constants without @CAbi (the ABI test cannot check them)");
    }

    private static void unannotated(Class<?> type, List<String> into) {
        for (Field field : type.getDeclaredFields()) {
            final String name = field.getName();
            final boolean layoutName = name.endsWith("_OFFSET") || name.endsWith("_SIZE") || name.equals("SIZE");
            if (Modifier.isStatic(field.getModifiers()) && field.getType().isPrimitive() && layoutName && field.getAnnotation(CAbi.class) == null) {
                into.add(type.getSimpleName() + "." + name);
            }
        }
        for (Class<?> nested : type.getDeclaredClasses()) {
            unannotated(nested, into);
        }
    }

    @Test
    void everyJavaOffsetSizeAndConstantEqualsWhatGccPrintsFromTheInstalledHeaders() {
        CPrograms.requireToolchain();
        final Map<String, Long> printed = printWithGcc("abi_all", entries);
        final List<String> mismatches = mismatches(entries, printed);
        assertEquals(List.of(), mismatches, "Java bindings differ from the installed rdma-core headers");

        final long offsets = entries.stream().filter(e -> e.expression().startsWith("offsetof")).count();
        final long sizes = entries.stream().filter(e -> e.expression().startsWith("sizeof")).count();
        final long widths = entries.stream().filter(e -> e.width() > 0).count();
        System.out.printf("ABI: %d values compared with gcc (%d offsets, %d struct sizes, %d constants) and %d member widths%n",
            entries.size(), offsets, sizes, entries.size() - offsets - sizes, widths);
        // A floor, so that a scanning mistake that finds nothing cannot pass quietly.
        assertTrue(entries.size() >= 200, "only " + entries.size() + " ABI entries collected");
        assertTrue(widths >= 100, "only " + widths + " widths collected");
    }

    @Test
    void aWrongOffsetOrWidthIsReportedAsAMismatch() {
        CPrograms.requireToolchain();
        final List<Entry> wrong = List.of(
            new Entry("wrong.QP_NUM_OFFSET", "offsetof(struct ibv_qp, qp_num)", 48, true, 4),
            new Entry("wrong.LKEY_WIDTH", "offsetof(struct ibv_mr, lkey)", 36, true, 8),
            new Entry("right.SGE_SIZE", "sizeof(struct ibv_sge)", 16, true, 0));
        final List<String> mismatches = mismatches(wrong, printWithGcc("abi_wrong", wrong));
        assertEquals(2, mismatches.size(), mismatches.toString());
        assertTrue(mismatches.get(0).contains("wrong.QP_NUM_OFFSET: Java 48, C 52"), mismatches.get(0));
        assertTrue(mismatches.get(1).contains("wrong.LKEY_WIDTH: Java accesses 8 bytes, C member is 4"), mismatches.get(1));
    }

    @Test
    void annotatedExpressionsCoverTheStructsTheBindingsPassToC() {
        final List<String> expected = List.of("struct ibv_context", "struct verbs_context", "struct ibv_port_attr", "struct ibv_device_attr",
            "struct ibv_device_attr_ex", "struct ibv_mr", "struct ibv_cq", "struct ibv_qp", "struct ibv_qp_init_attr",
            "struct ibv_qp_init_attr_ex", "struct ibv_qp_attr", "struct ibv_sge", "struct ibv_send_wr", "struct ibv_recv_wr",
            "struct ibv_wc", "struct ibv_flow_attr", "struct ibv_flow_spec_eth", "struct ibv_flow_spec_ipv4",
            "struct ibv_flow_spec_tcp_udp", "struct ibv_flow", "struct mlx5dv_obj", "struct mlx5dv_qp", "struct mlx5dv_cq",
            "struct mlx5dv_qp_init_attr", "struct mlx5_wqe_ctrl_seg", "struct mlx5_wqe_eth_seg", "struct mlx5_wqe_data_seg",
            "struct mlx5_cqe64", "struct mlx5_err_cqe");
        final List<String> uncovered = new ArrayList<>();
        for (String struct : expected) {
            if (entries.stream().noneMatch(e -> e.expression().contains(struct + ",") || e.expression().contains(struct + ")"))) {
                uncovered.add(struct);
            }
        }
        assertEquals(List.of(), uncovered, "structs used by the bindings without any checked offset or size");
    }

    /** Compiles one program printing every entry's expression (and member width) and returns name → value. */
    static Map<String, Long> printWithGcc(String program, List<Entry> toPrint) {
        final StringBuilder c = new StringBuilder("""
            #include <stddef.h>
            #include <stdint.h>
            #include <stdio.h>
            #include <infiniband/verbs.h>
            #include <infiniband/mlx5dv.h>

            int main(void) {
            """);
        for (Entry entry : toPrint) {
            c.append("    printf(\"%s %lld\\n\", \"").append(entry.name()).append("\", (long long) (").append(entry.expression()).append("));\n");
            if (entry.width() > 0) {
                c.append("    printf(\"%s %lld\\n\", \"").append(entry.name()).append("#width\", (long long) ")
                    .append(memberSize(entry)).append(");\n");
            }
        }
        c.append("    return 0;\n}\n");
        final Path executable = CPrograms.compile(program, c.toString());
        final Map<String, Long> values = new LinkedHashMap<>();
        for (String line : CPrograms.run(executable, "").split("\n")) {
            if (!line.isBlank()) {
                final String[] parts = line.trim().split(" ");
                values.put(parts[0], Long.parseLong(parts[1]));
            }
        }
        return values;
    }

    private static String memberSize(Entry entry) {
        final Matcher m = OFFSETOF.matcher(entry.expression());
        if (!m.matches()) {
            fail(entry.name() + ": width given but the expression is not offsetof(struct s, member): " + entry.expression());
        }
        return "sizeof(((" + m.group(1) + " *) 0)->" + m.group(2) + ")";
    }

    static List<String> mismatches(List<Entry> checked, Map<String, Long> printed) {
        final List<String> mismatches = new ArrayList<>();
        for (Entry entry : checked) {
            final Long c = printed.get(entry.name());
            if (c == null) {
                mismatches.add(entry.name() + ": not printed by the C program");
                continue;
            }
            // An int constant may hold a 32-bit C value with the top bit set (MLX5_INLINE_SEG): compare the bits.
            final boolean equal = c == entry.javaValue() || (entry.javaIsInt() && c == Integer.toUnsignedLong((int) entry.javaValue()));
            if (!equal) {
                mismatches.add(entry.name() + ": Java " + entry.javaValue() + ", C " + c + "  (" + entry.expression() + ")");
            }
            if (entry.width() > 0) {
                final long member = printed.get(entry.name() + "#width");
                if (member != entry.width()) {
                    mismatches.add(entry.name() + ": Java accesses " + entry.width() + " bytes, C member is " + member + "  (" + entry.expression() + ")");
                }
            }
        }
        return mismatches;
    }
}
