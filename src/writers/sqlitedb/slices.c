/*
 * slices.c — the sink's slices as rows of the slice and arg_value tables, in parts: the thread
 * that walks a part (tp_sink_drive_parts) records its slices and arguments into the part's
 * slot, measuring and checking their texts; the driving thread then turns the slot into rows
 * in part order (arg_value's ids and key ids are numbered in that order) and hands them to the
 * tables' builders (argtree.c), which keep the texts by reference.
 *
 * Owns: a slot's arrays (the texts stay the sink's).
 */
#include <stdio.h>
#include <string.h>

#include "writers/sqlitedb/sqlitedb_int.h"

/* A text of the sink's (NULL: none). */
static struct sl_text text_of(const char *s)
{
	struct sl_text t = {s, 0, 1};
	if (s) {
		size_t n = strlen(s);
		t.n = (uint32_t)n;
		t.ok = tp_text_is_safe(s, n, TP_TEXT_UTF8);
	}
	return t;
}

void sl_record(struct sl_slot *s, const struct tp_sink_slice *ss)
{
	if (s->oom)
		return;
	if (s->n == s->cap) {
		struct sl_slice *n = tp_grow(s->sl, sizeof *n, s->n + 1, &s->cap);
		if (!n) {
			s->oom = 1;
			return;
		}
		s->sl = n;
	}
	if (s->nargs + ss->num_args > s->cap_args) {
		struct sl_arg *n =
		    tp_grow(s->args, sizeof *n, s->nargs + ss->num_args, &s->cap_args);
		if (!n) {
			s->oom = 1;
			return;
		}
		s->args = n;
	}
	s->sl[s->n++] = (struct sl_slice){
	    .id = ss->id,
	    .parent = ss->parent_id,
	    .ts = ss->ts_ns,
	    .dur = ss->dur_ns,
	    .track = (int64_t)ss->track->uuid,
	    .cmd = ss->slice ? ss->slice->cmd_id : 0,
	    .depth = ss->depth,
	    .nargs = (uint32_t)ss->num_args,
	    .arg0 = s->nargs,
	    .name = text_of(ss->name),
	    .cat = text_of(ss->category),
	};
	for (size_t i = 0; i < ss->num_args; i++) {
		const struct tp_sink_arg *a = &ss->args[i];
		struct sl_arg *x = &s->args[s->nargs++];
		x->key = a->key;
		x->type = (int)a->type;
		x->s = text_of(NULL);
		if (a->type == TP_ARG_INT)
			x->v.i = a->i;
		else if (a->type == TP_ARG_UINT)
			x->v.u = a->u;
		else if (a->type == TP_ARG_REAL)
			x->v.d = a->d;
		else
			x->s = text_of(a->s ? a->s : "");
	}
}

static struct sqb_val v_int(int64_t i)
{
	return (struct sqb_val){.type = SQB_INT, .i = i};
}

static struct sqb_val v_text(const struct sl_text *t)
{
	if (!t->s)
		return (struct sqb_val){.type = SQB_NULL};
	return (struct sqb_val){.type = t->ok ? SQB_TEXT_REF : SQB_TEXT, .n = t->n, .s = t->s};
}

/* Argument a of slice `set` as an arg_value row. */
static int add_arg(struct sl_out *o, int64_t set, const struct sl_arg *a)
{
	struct sqb_val v[A_NCOLS];
	char num[32];
	int st, kind;
	v[A_INT].type = v[A_STR].type = v[A_REAL].type = SQB_NULL;
	v[A_SET] = v_int(set);
	v[A_ID] = v_int(++o->next_arg);
	v[A_KEY].type = SQB_INT;
	if ((st = o->key_id(o->ctx, a->key, &v[A_KEY].i)))
		return st;
	switch (a->type) {
	case TP_ARG_INT:
		kind = ARG_INT;
		v[A_INT] = v_int(a->v.i);
		break;
	case TP_ARG_UINT:
		/* int_value is signed 64-bit, as in trace_processor; a value above INT64_MAX keeps
		 * its exact decimal text for display_value (copied by the tree). */
		kind = ARG_INT;
		v[A_INT] = v_int((int64_t)a->v.u);
		if (a->v.u > (uint64_t)INT64_MAX) {
			int n = snprintf(num, sizeof num, "%llu", (unsigned long long)a->v.u);
			v[A_STR] = (struct sqb_val){.type = SQB_TEXT, .n = (uint32_t)n, .s = num};
			kind = ARG_UINT_BIG;
		}
		break;
	case TP_ARG_REAL:
		kind = ARG_REAL;
		v[A_REAL] = sqb_real(a->v.d);
		break;
	default:
		kind = ARG_STRING;
		v[A_STR] = v_text(&a->s);
		break;
	}
	v[A_TYPE] = v_int(kind);
	return o->add(o->ctx, SQT_ARGS, v);
}

/* Slice x (its arguments at args) as a slice row and arg_value rows. */
static int add_slice(struct sl_out *o, const struct sl_slice *x, const struct sl_arg *args)
{
	struct sqb_val v[C_NCOLS];
	v[C_PARENT].type = v[C_ARGSET].type = v[C_CMD].type = SQB_NULL;
	v[C_ID] = v_int((int64_t)x->id);
	v[C_TS] = v_int(x->ts);
	v[C_DUR] = v_int(x->dur);
	v[C_TRACK] = v_int(x->track);
	v[C_CAT] = v_text(&x->cat);
	v[C_NAME] = v_text(&x->name);
	v[C_DEPTH] = v_int(x->depth);
	if (x->parent)
		v[C_PARENT] = v_int((int64_t)x->parent);
	if (x->nargs)
		v[C_ARGSET] = v_int((int64_t)x->id);
	if (x->cmd)
		v[C_CMD] = v_int(x->cmd);
	int st = o->add(o->ctx, SQT_SLICE, v);
	for (size_t i = 0; i < x->nargs && !st; i++)
		st = add_arg(o, (int64_t)x->id, &args[i]);
	return st;
}

int sl_emit(struct sl_slot *s, struct sl_out *o)
{
	int st = s->oom ? TP_ENOMEM : TP_OK;
	for (size_t i = 0; i < s->n && !st; i++)
		st = add_slice(o, &s->sl[i], s->args + s->sl[i].arg0);
	s->n = s->nargs = 0;
	return st;
}

void sl_slot_free(struct sl_slot *s)
{
	tp_free(s->sl);
	tp_free(s->args);
	memset(s, 0, sizeof *s);
}
