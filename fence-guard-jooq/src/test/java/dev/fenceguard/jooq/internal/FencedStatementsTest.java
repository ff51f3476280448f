package dev.fenceguard.jooq.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fenceguard.core.FenceEncoding;
import dev.fenceguard.core.FencePolicy;
import dev.fenceguard.core.LockMetrics;
import dev.fenceguard.core.spi.WriteRule;
import java.util.List;
import java.util.Optional;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.RenderQuotedNames;
import org.jooq.conf.Settings;
import org.jooq.conf.StatementType;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.Test;

/** Statements are rendered once per shape, with every bind value in its place; no database needed. */
class FencedStatementsTest {

    private static final Table<?> ORDERS = DSL.table(DSL.name("shop", "orders"));
    private static final Field<Object> ID = DSL.field(DSL.name("shop", "orders", "id"), SQLDataType.BIGINT.asConvertedDataType(
            org.jooq.Converter.ofNullable(Long.class, Object.class, v -> v, v -> (Long) v)));

    private static FencedStatements orders() {
        return new FencedStatements(ORDERS, field("id", SQLDataType.BIGINT), field("fence_token", SQLDataType.BIGINT),
                Optional.of(DSL.field(DSL.name("shop", "orders", "deleted"), SQLDataType.BOOLEAN)),
                new WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER, LockMetrics.none(), "postgres"), PostgresFencing.INSTANCE);
    }

    @SuppressWarnings("unchecked")
    private static Field<Object> field(String column, org.jooq.DataType<?> type) {
        return (Field<Object>) DSL.field(DSL.name("shop", "orders", column), type);
    }

    private static List<Field<?>> columns(String... names) {
        return java.util.Arrays.stream(names).<Field<?>>map(n -> DSL.field(DSL.name(n))).toList();
    }

    @Test
    void eachShapeIsRenderedOnceAndReused() {
        FencedStatements s = orders();
        StatementShape first = s.update(columns("status", "note"), s.defaultRendering());
        assertThat(s.update(columns("status", "note"), s.defaultRendering())).as("new Field objects, same columns").isSameAs(first);
        assertThat(first.sql()).isEqualTo("update \"shop\".\"orders\" set \"status\" = ?, \"note\" = ?, \"fence_token\" = ? "
                + "where (\"shop\".\"orders\".\"id\" = ? and coalesce(\"shop\".\"orders\".\"fence_token\", 0) <= ? "
                + "and coalesce(\"shop\".\"orders\".\"deleted\", false) = false)");
        assertThat(first.slots()).containsExactly(FencedStatements.FIRST_VALUE, FencedStatements.FIRST_VALUE + 1,
                FencedStatements.FENCE, FencedStatements.KEY, FencedStatements.FENCE);
        assertThat(first.plainJdbc()).isTrue();
        assertThat(s.update(columns("note", "status"), s.defaultRendering())).as("another order is another statement").isNotSameAs(first);
        assertThat(s.cachedShapes()).isEqualTo(2);
    }

    @Test
    void aColumnOfAnotherTypeIsAnotherShape() {
        FencedStatements s = orders();
        StatementShape untyped = s.update(columns("status"), s.defaultRendering());
        StatementShape typed = s.update(List.of(DSL.field(DSL.name("status"), SQLDataType.JSONB)), s.defaultRendering());
        assertThat(typed).isNotSameAs(untyped);
        assertThat(typed.sql()).contains("\"status\" = cast(? as jsonb)");
        assertThat(typed.plainJdbc()).as("plain jOOQ types bind as JDBC does; the JSONB value itself decides").isTrue();
    }

    @Test
    void aConverterMakesAShapeNeedJooqBinding() {
        FencedStatements s = new FencedStatements(ORDERS, ID, field("fence_token", SQLDataType.BIGINT), Optional.empty(),
                new WriteRule(FencePolicy.SAME_OR_NEWER, FenceEncoding.INTEGER, LockMetrics.none(), "postgres"), PostgresFencing.INSTANCE);
        assertThat(s.readRow(s.defaultRendering()).plainJdbc()).isFalse();
        assertThat(orders().readRow(orders().defaultRendering()).plainJdbc()).isTrue();
    }

    @Test
    void theCacheIsBounded() {
        FencedStatements s = orders();
        for (int i = 0; i < FencedStatements.MAX_SHAPES + 50; i++) {
            s.update(columns("c" + i), s.defaultRendering());
        }
        assertThat(s.cachedShapes()).isEqualTo(FencedStatements.MAX_SHAPES);
        assertThat(s.update(columns("c0"), s.defaultRendering()).sql()).as("an evicted shape renders again").contains("\"c0\" = ?");
    }

    @Test
    void multiKeyStatementsComeInPowersOfTwo() {
        assertThat(List.of(1, 2, 3, 4, 5, 8, 9, 1000).stream().map(FencedStatements::padded)).containsExactly(1, 2, 4, 4, 8, 8, 16, 1024);
        FencedStatements s = orders();
        StatementShape all = PostgresFencing.updateAllShape(s, columns("status"), 4, s.defaultRendering());
        assertThat(all.sql()).contains("\"shop\".\"orders\".\"id\" in (?, ?, ?, ?)").endsWith("returning \"shop\".\"orders\".\"id\"");
        int v = FencedStatements.FIRST_VALUE;
        assertThat(all.slots()).containsExactly(v, FencedStatements.FENCE, v + 1, v + 2, v + 3, v + 4, FencedStatements.FENCE);
    }

    @Test
    @SuppressWarnings("unchecked")
    void slotLikeTextInQuotedNamesIsNotABindValue() {
        Table<?> weird = DSL.table(DSL.name("shop", "o:fg_1"));
        FencedStatements s = new FencedStatements(weird, (Field<Object>) (Field<?>) DSL.field(DSL.name("shop", "o:fg_1", "k:fg_0")),
                (Field<Object>) (Field<?>) DSL.field(DSL.name("shop", "o:fg_1", "f"), SQLDataType.BIGINT), Optional.empty(),
                new WriteRule(FencePolicy.STRICTLY_NEWER, FenceEncoding.INTEGER, LockMetrics.none(), "postgres"), PostgresFencing.INSTANCE);
        StatementShape shape = s.update(List.of(), s.defaultRendering());
        assertThat(shape.sql()).isEqualTo("update \"shop\".\"o:fg_1\" set \"f\" = ? where (\"shop\".\"o:fg_1\".\"k:fg_0\" = ? "
                + "and coalesce(\"shop\".\"o:fg_1\".\"f\", 0) < ?)");
        assertThat(shape.slots()).containsExactly(FencedStatements.FENCE, FencedStatements.KEY, FencedStatements.FENCE);
    }

    @Test
    void aBindValueThatIsNoSlotIsRefusedWhenRendered() {
        DSLContext ctx = DSL.using(SQLDialect.POSTGRES);
        assertThatThrownBy(() -> FencedStatements.render(DSL.update(ORDERS).set(DSL.field(DSL.name("status")), (Object) "x"), ctx))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("could not place the bind values");
    }

    @Test
    void aContextThatRendersNamesDifferentlyGetsItsOwnShapes() {
        FencedStatements s = orders();
        DSLContext plain = DSL.using(SQLDialect.POSTGRES, new Settings().withStatementType(StatementType.STATIC_STATEMENT));
        assertThat(s.rendering(plain)).as("settings that do not change names share the default shapes").isSameAs(s.defaultRendering());

        DSLContext mapped = DSL.using(SQLDialect.POSTGRES, new Settings().withStatementType(StatementType.STATIC_STATEMENT)
                .withRenderMapping(new RenderMapping().withSchemata(new MappedSchema().withInput("shop").withOutput("tenant_7"))));
        StatementShape tenant = s.update(columns("status"), s.rendering(mapped));
        assertThat(tenant.sql()).startsWith("update \"tenant_7\".\"orders\" set \"status\" = ?");
        assertThat(tenant.slots()).as("still bind values, whatever the caller's statement type")
                .containsExactly(FencedStatements.FIRST_VALUE, FencedStatements.FENCE, FencedStatements.KEY, FencedStatements.FENCE);
        assertThat(s.update(columns("status"), s.defaultRendering()).sql()).startsWith("update \"shop\".\"orders\"");

        DSLContext unquoted = DSL.using(SQLDialect.POSTGRES, new Settings().withRenderQuotedNames(RenderQuotedNames.NEVER));
        assertThat(s.readRow(s.rendering(unquoted)).sql()).isEqualTo("select shop.orders.id, shop.orders.fence_token, shop.orders.deleted "
                + "from shop.orders where shop.orders.id = ?");
    }
}
