package dev.tern.rawqp.ffm;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Names the C integer constant expression a binding constant was copied from, so that a test can ask gcc for the
 * real value against the installed rdma-core headers.
 *
 * <p>The bindings are written by hand (jextract cannot be installed here), so every struct offset, struct size and
 * header constant they use carries this annotation: {@code @CAbi(value = "offsetof(struct ibv_qp, qp_num)", width = 4)}.
 * {@code AbiTest} collects every annotated field, compiles one C program printing each expression (and, where
 * {@link #width()} is given, {@code sizeof} the member), and fails on any difference. A field whose name ends in
 * {@code _OFFSET} or {@code _SIZE} in a binding class without this annotation also fails that test, so a new offset
 * cannot skip the check.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface CAbi {
    /** A C integer constant expression: {@code offsetof(...)}, {@code sizeof(...)}, an enum or macro name, or arithmetic on them. */
    String value();

    /**
     * For an {@code offsetof(struct s, member)} expression: the number of bytes the binding reads or writes at that
     * offset, checked against {@code sizeof} the member. 0 when the binding does not access the member itself
     * (a nested struct's base, an array it fills byte by byte).
     */
    int width() default 0;
}
