/*
 * bert_mini.c — a small CPU inference program instrumented with libtpuprof, the project's
 * real end-to-end example. It runs a BERT-mini-like encoder (token + position embedding,
 * N layers of multi-head self-attention and a GELU feed-forward block with layer norms,
 * a tanh pooler and a 4-class classifier) on sentences tokenised from a fixed set, with
 * OpenBLAS cblas_sgemm for every matrix product. Weights are deterministic pseudo-random
 * numbers with a share of exact zeros per matrix, so the recorded weight sparsity is real.
 *
 * Instrumentation covers the three capture layers:
 *   - activities: "load weights" (no step), "data prep" (tokenisation) and "postprocess"
 *     (class probabilities and the checksum) for every step;
 *   - steps: one per inference of graph "bert_mini", the first --warmup flagged warm-up;
 *   - operators: every kernel, with tensors, weight shape and sparsity, attributes, bytes
 *     and flops attached (recorded in mode 2; mode 1 keeps names and types).
 * Capture is switched on from the environment (TPUPROF=1 or 2, TPUPROF_DIR=...), so the
 * same binary is the uninstrumented baseline when TPUPROF is unset. The program prints the
 * latency of each step and a checksum of the logits, which must not depend on the capture.
 *
 * Owns: all model buffers (freed at exit) and the operator descriptors and tensor names,
 * built once and reused every step (libtpuprof copies names by value, so this is only to
 * avoid formatting them per step).
 */
#include <tpuprof/tpuprof.h>

#include <cblas.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HIDDEN 256
#define HEADS 4
#define HEAD_DIM (HIDDEN / HEADS)
#define FFN 1024
#define VOCAB 2048
#define CLASSES 4
#define MAX_SEQ 512
#define MAX_IN 3

static const char *const sentences[] = {
    "the profiler records every operator of the encoder",
    "sparse weights can make matrix products faster on some kernels",
    "a warm up step fills caches and is excluded from the statistics",
    "tokenisation of a fixed sentence set keeps the run deterministic",
    "layer norm and gelu are cheap next to the attention products",
    "the checksum must be the same with capture on and off",
    "open blas multiplies the projections of every attention head",
    "eight short sentences are enough for a small benchmark",
};
#define NSENT (sizeof sentences / sizeof sentences[0])

struct config {
	int layers, steps, warmup, seq, batch, threads, quiet;
	int no_compute; /* --no-compute: only the capture calls of forward(), for the benchmark */
	int ab;         /* --ab: odd steps skip their capture calls (paired overhead benchmark) */
};

/* ---- operator descriptors and their mode-2 details --------------------------------------- */

struct opinfo {
	struct tpuprof_op desc;
	struct tpuprof_tensor in[MAX_IN], out[1];
	int64_t in_dims[MAX_IN][4], out_dims[4];
	int64_t wshape[2];
	struct tpuprof_attr attrs[3];
	struct tpuprof_op_detail detail;
};

/* A printf into a string built once and reused for every step. */
static char *strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *strf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = malloc((size_t)n + 1);
	if (!s) {
		fprintf(stderr, "bert_mini: out of memory\n");
		exit(1);
	}
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static void op_init(struct opinfo *o, const char *type, const char *name, const char *post)
{
	memset(o, 0, sizeof *o);
	o->desc.type = type;
	o->desc.name = name;
	o->desc.post_op = post;
	tpuprof_op_detail_init(&o->detail); /* size fields; sparsity unknown */
	o->detail.inputs = o->in;
	o->detail.outputs = o->out;
	o->detail.attrs = o->attrs;
}

static uint64_t numel(const int64_t *d, int n)
{
	uint64_t v = 1;
	for (int i = 0; i < n; i++)
		v *= (uint64_t)d[i];
	return v;
}

static void op_in(struct opinfo *o, const char *name, const char *dtype, int ndim, int64_t d0,
                  int64_t d1, int64_t d2)
{
	int i = o->detail.num_inputs++;
	int64_t *d = o->in_dims[i];
	d[0] = d0, d[1] = d1, d[2] = d2;
	o->in[i] = (struct tpuprof_tensor){name, dtype, d, ndim};
	o->detail.bytes += numel(d, ndim) * 4;
}

static void op_out(struct opinfo *o, const char *name, int ndim, int64_t d0, int64_t d1, int64_t d2,
                   int64_t d3)
{
	int64_t *d = o->out_dims;
	d[0] = d0, d[1] = d1, d[2] = d2, d[3] = d3;
	o->out[0] = (struct tpuprof_tensor){name, "fp32", d, ndim};
	o->detail.num_outputs = 1;
	o->detail.bytes += numel(d, ndim) * 4;
}

static void op_attr(struct opinfo *o, const char *k, const char *v)
{
	o->attrs[o->detail.num_attrs++] = (struct tpuprof_attr){k, v};
}

static void op_weight(struct opinfo *o, int64_t rows, int64_t cols, double sparsity)
{
	o->wshape[0] = rows;
	o->wshape[1] = cols;
	o->detail.weight_shape = o->wshape;
	o->detail.weight_ndim = 2;
	o->detail.weight_sparsity = sparsity;
}

/* 0 while an --ab step runs without its capture calls (see main). */
static int g_record = 1;

static inline void op_begin(const struct opinfo *o)
{
	if (g_record)
		tpuprof_op_begin(&o->desc);
}
static inline void op_end(const struct opinfo *o)
{
	if (g_record)
		tpuprof_op_end(&o->desc, &o->detail);
}

/* ---- weights -------------------------------------------------------------------------- */

struct linear {
	float *w, *b; /* w: in x out, row-major */
	int in, out;
	double sparsity; /* measured fraction of exact zeros in w */
};

struct layer {
	struct linear q, k, v, o, up, down;
	float *ln1_g, *ln1_b, *ln2_g, *ln2_b;
	struct opinfo op_q, op_k, op_v, op_scores, op_softmax, op_context, op_o, op_ln1, op_up,
	    op_gelu, op_down, op_ln2;
};

struct model {
	struct config cfg;
	float *word, *pos, *emb_g, *emb_b;
	struct layer *layers;
	struct linear pool, cls;
	struct opinfo op_gather, op_addpos, op_embln, op_pool, op_cls;
	/* activations */
	int *ids;
	float *x, *q, *k, *v, *ctx, *tmp, *ffn, *probs, *pooled, *pooled_in, *logits;
};

/* xorshift64*: deterministic across platforms. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static float rng_uniform(uint64_t *s) /* [-1, 1) */
{
	return (float)((double)(rng_next(s) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p) {
		fprintf(stderr, "bert_mini: out of memory\n");
		exit(1);
	}
	return p;
}

static float *fill(size_t n, uint64_t seed, float scale, double zero_share, double *sparsity)
{
	float *v = xcalloc(n, sizeof *v);
	uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
	size_t zeros = 0;
	for (size_t i = 0; i < n; i++) {
		double u = (double)(rng_next(&s) >> 11) / 9007199254740992.0;
		v[i] = u < zero_share ? 0.0f : rng_uniform(&s) * scale;
		zeros += v[i] == 0.0f;
	}
	if (sparsity)
		*sparsity = (double)zeros / (double)n;
	return v;
}

static void linear_init(struct linear *l, int in, int out, uint64_t seed, double zero_share)
{
	l->in = in;
	l->out = out;
	l->w = fill((size_t)in * out, seed, 1.0f / sqrtf((float)in), zero_share, &l->sparsity);
	l->b = fill((size_t)out, seed + 7, 0.02f, 0, NULL);
}

static float *ones_plus(size_t n, uint64_t seed, float jitter)
{
	float *v = fill(n, seed, jitter, 0, NULL);
	for (size_t i = 0; i < n; i++)
		v[i] += 1.0f;
	return v;
}

/* Describes a dense projection X[M x in] * W[in x out] + b as an operator. */
static void describe_linear(struct opinfo *o, const char *name, const char *post,
                            const char *x_name, const char *y_name, const struct linear *l,
                            int batch, int seq)
{
	op_init(o, "MatMul", name, post);
	op_in(o, x_name, "fp32", 3, batch, seq, l->in);
	op_in(o, strf("%s.weight", name), "fp32", 2, l->in, l->out, 0);
	op_in(o, strf("%s.bias", name), "fp32", 1, l->out, 0, 0);
	op_out(o, y_name, 3, batch, seq, l->out, 0);
	op_weight(o, l->in, l->out, l->sparsity);
	op_attr(o, "transpose_b", "false");
	if (post)
		op_attr(o, "append_op", post);
	o->detail.flops = 2ull * (uint64_t)batch * seq * l->in * l->out;
}

static void describe_norm(struct opinfo *o, const char *name, const char *x, const char *y,
                          int batch, int seq)
{
	op_init(o, "LayerNorm", name, NULL);
	op_in(o, x, "fp32", 3, batch, seq, HIDDEN);
	op_in(o, strf("%s.gamma", name), "fp32", 1, HIDDEN, 0, 0);
	op_in(o, strf("%s.beta", name), "fp32", 1, HIDDEN, 0, 0);
	op_out(o, y, 3, batch, seq, HIDDEN, 0);
	op_attr(o, "epsilon", "1e-12");
	op_attr(o, "axis", "-1");
	o->detail.flops = 8ull * (uint64_t)batch * seq * HIDDEN;
}

/* Encoder layer i of a batch-B, sequence-S model: its weights (seeded by i) and the
 * descriptions of its ten operators. */
static void layer_init(struct layer *L, int i, int B, int S)
{
	uint64_t s = 100 + 20 * (uint64_t)i;
	/* Zero shares differ per projection so the report shows matrices both below and above
	 * the 50 % line of the sparse what-if rule. */
	linear_init(&L->q, HIDDEN, HIDDEN, s + 1, 0.10);
	linear_init(&L->k, HIDDEN, HIDDEN, s + 2, 0.10);
	linear_init(&L->v, HIDDEN, HIDDEN, s + 3, 0.30);
	linear_init(&L->o, HIDDEN, HIDDEN, s + 4, 0.20);
	linear_init(&L->up, HIDDEN, FFN, s + 5, 0.40);
	linear_init(&L->down, FFN, HIDDEN, s + 6, 0.60);
	L->ln1_g = ones_plus(HIDDEN, s + 7, 0.05f);
	L->ln1_b = fill(HIDDEN, s + 8, 0.02f, 0, NULL);
	L->ln2_g = ones_plus(HIDDEN, s + 9, 0.05f);
	L->ln2_b = fill(HIDDEN, s + 10, 0.02f, 0, NULL);

	const char *in = strf("encoder.%d.input", i);
	const char *qn = strf("encoder.%d.attn.q_out", i), *kn = strf("encoder.%d.attn.k_out", i);
	const char *vn = strf("encoder.%d.attn.v_out", i);
	const char *sc = strf("encoder.%d.attn.scores_out", i);
	const char *pr = strf("encoder.%d.attn.probs", i);
	const char *cx = strf("encoder.%d.attn.context_out", i);
	const char *ao = strf("encoder.%d.attn.out_sum", i);
	const char *h1 = strf("encoder.%d.attn.ln_out", i);
	const char *up = strf("encoder.%d.ffn.up_out", i);
	const char *ge = strf("encoder.%d.ffn.gelu_out", i);
	const char *dn = strf("encoder.%d.ffn.down_sum", i);
	const char *h2 = strf("encoder.%d.output", i);
	describe_linear(&L->op_q, strf("encoder.%d.attn.q", i), NULL, in, qn, &L->q, B, S);
	describe_linear(&L->op_k, strf("encoder.%d.attn.k", i), NULL, in, kn, &L->k, B, S);
	describe_linear(&L->op_v, strf("encoder.%d.attn.v", i), NULL, in, vn, &L->v, B, S);

	struct opinfo *o = &L->op_scores;
	op_init(o, "BatchMatMul", strf("encoder.%d.attn.scores", i), NULL);
	op_in(o, qn, "fp32", 3, B, S, HIDDEN);
	op_in(o, kn, "fp32", 3, B, S, HIDDEN);
	op_out(o, sc, 4, B, HEADS, S, S);
	op_attr(o, "heads", "4");
	op_attr(o, "transpose_b", "true");
	op_attr(o, "alpha", "0.125");
	o->detail.flops = 2ull * (uint64_t)B * HEADS * S * S * HEAD_DIM;

	o = &L->op_softmax;
	op_init(o, "Softmax", strf("encoder.%d.attn.softmax", i), NULL);
	op_in(o, sc, "fp32", 3, B * HEADS, S, S);
	op_out(o, pr, 4, B, HEADS, S, S);
	op_attr(o, "axis", "-1");
	o->detail.flops = 5ull * (uint64_t)B * HEADS * S * S;

	o = &L->op_context;
	op_init(o, "BatchMatMul", strf("encoder.%d.attn.context", i), NULL);
	op_in(o, pr, "fp32", 3, B * HEADS, S, S);
	op_in(o, vn, "fp32", 3, B, S, HIDDEN);
	op_out(o, cx, 3, B, S, HIDDEN, 0);
	op_attr(o, "heads", "4");
	o->detail.flops = 2ull * (uint64_t)B * HEADS * S * S * HEAD_DIM;

	describe_linear(&L->op_o, strf("encoder.%d.attn.out", i), "sum", cx, ao, &L->o, B, S);
	describe_norm(&L->op_ln1, strf("encoder.%d.attn.ln", i), ao, h1, B, S);
	describe_linear(&L->op_up, strf("encoder.%d.ffn.up", i), NULL, h1, up, &L->up, B, S);

	o = &L->op_gelu;
	op_init(o, "Gelu", strf("encoder.%d.ffn.gelu", i), NULL);
	op_in(o, up, "fp32", 3, B, S, FFN);
	op_out(o, ge, 3, B, S, FFN, 0);
	op_attr(o, "approximate", "tanh");
	o->detail.flops = 10ull * (uint64_t)B * S * FFN;

	describe_linear(&L->op_down, strf("encoder.%d.ffn.down", i), "sum", ge, dn, &L->down, B, S);
	describe_norm(&L->op_ln2, strf("encoder.%d.ffn.ln", i), dn, h2, B, S);
}

static void model_init(struct model *m, const struct config *c)
{
	memset(m, 0, sizeof *m);
	m->cfg = *c;
	int B = c->batch, S = c->seq;
	m->word = fill((size_t)VOCAB * HIDDEN, 1, 0.1f, 0, NULL);
	m->pos = fill((size_t)MAX_SEQ * HIDDEN, 2, 0.1f, 0, NULL);
	m->emb_g = ones_plus(HIDDEN, 3, 0.05f);
	m->emb_b = fill(HIDDEN, 4, 0.02f, 0, NULL);
	m->layers = xcalloc((size_t)c->layers, sizeof *m->layers);
	for (int i = 0; i < c->layers; i++)
		layer_init(&m->layers[i], i, B, S);
	linear_init(&m->pool, HIDDEN, HIDDEN, 900, 0.25);
	linear_init(&m->cls, HIDDEN, CLASSES, 901, 0.0);

	struct opinfo *o = &m->op_gather;
	op_init(o, "Gather", "embeddings.word", NULL);
	o->detail.num_inputs = 2;
	o->in_dims[0][0] = B, o->in_dims[0][1] = S;
	o->in[0] = (struct tpuprof_tensor){"input_ids", "int32", o->in_dims[0], 2};
	o->in_dims[1][0] = VOCAB, o->in_dims[1][1] = HIDDEN;
	o->in[1] = (struct tpuprof_tensor){"embeddings.word.table", "fp32", o->in_dims[1], 2};
	op_out(o, "embeddings.word_out", 3, B, S, HIDDEN, 0);
	op_attr(o, "axis", "0");
	o->detail.bytes += (uint64_t)B * S * 4 + (uint64_t)B * S * HIDDEN * 4;

	o = &m->op_addpos;
	op_init(o, "Add", "embeddings.position", NULL);
	op_in(o, "embeddings.word_out", "fp32", 3, B, S, HIDDEN);
	op_in(o, "embeddings.position.table", "fp32", 2, S, HIDDEN, 0);
	op_out(o, "embeddings.sum", 3, B, S, HIDDEN, 0);
	o->detail.flops = (uint64_t)B * S * HIDDEN;

	describe_norm(&m->op_embln, "embeddings.ln", "embeddings.sum", "encoder.0.input", B, S);

	o = &m->op_pool;
	describe_linear(o, "pooler.dense", "tanh", "pooler.cls_token", "pooler.out", &m->pool, B,
	                1);
	describe_linear(&m->op_cls, "classifier", NULL, "pooler.out", "logits", &m->cls, B, 1);

	size_t tok = (size_t)B * S;
	m->ids = xcalloc(tok, sizeof *m->ids);
	m->x = xcalloc(tok * HIDDEN, sizeof(float));
	m->q = xcalloc(tok * HIDDEN, sizeof(float));
	m->k = xcalloc(tok * HIDDEN, sizeof(float));
	m->v = xcalloc(tok * HIDDEN, sizeof(float));
	m->ctx = xcalloc(tok * HIDDEN, sizeof(float));
	m->tmp = xcalloc(tok * HIDDEN, sizeof(float));
	m->ffn = xcalloc(tok * FFN, sizeof(float));
	m->probs = xcalloc((size_t)B * HEADS * S * S, sizeof(float));
	m->pooled_in = xcalloc((size_t)B * HIDDEN, sizeof(float));
	m->pooled = xcalloc((size_t)B * HIDDEN, sizeof(float));
	m->logits = xcalloc((size_t)B * CLASSES, sizeof(float));
}

static void linear_free(struct linear *l)
{
	free(l->w);
	free(l->b);
}

static void model_free(struct model *m)
{
	for (int i = 0; i < m->cfg.layers; i++) {
		struct layer *L = &m->layers[i];
		linear_free(&L->q), linear_free(&L->k), linear_free(&L->v), linear_free(&L->o);
		linear_free(&L->up), linear_free(&L->down);
		free(L->ln1_g), free(L->ln1_b), free(L->ln2_g), free(L->ln2_b);
	}
	/* The layers array (and the model itself, a static) holds the operator descriptors; the
	 * capture session may still be open (TPUPROF=1/2 ends it at exit), so they are kept. */
	linear_free(&m->pool), linear_free(&m->cls);
	free(m->word), free(m->pos), free(m->emb_g), free(m->emb_b);
	free(m->ids), free(m->x), free(m->q), free(m->k), free(m->v), free(m->ctx), free(m->tmp);
	free(m->ffn), free(m->probs), free(m->pooled_in), free(m->pooled), free(m->logits);
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* y[M x out] = x[M x in] * W + b (+ y_old when accumulate, i.e. the fused residual "sum"). */
static void linear_fwd(const struct linear *l, const float *x, float *y, int M, int accumulate)
{
	if (!accumulate)
		for (int r = 0; r < M; r++)
			memcpy(y + (size_t)r * l->out, l->b, (size_t)l->out * sizeof(float));
	else
		for (int r = 0; r < M; r++)
			for (int c = 0; c < l->out; c++)
				y[(size_t)r * l->out + c] += l->b[c];
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, l->out, l->in, 1.0f, x, l->in,
	            l->w, l->out, 1.0f, y, l->out);
}

static void layer_norm(float *x, const float *g, const float *b, int rows)
{
	for (int r = 0; r < rows; r++) {
		float *v = x + (size_t)r * HIDDEN;
		double mean = 0, var = 0;
		for (int i = 0; i < HIDDEN; i++)
			mean += v[i];
		mean /= HIDDEN;
		for (int i = 0; i < HIDDEN; i++)
			var += (v[i] - mean) * (v[i] - mean);
		float inv = (float)(1.0 / sqrt(var / HIDDEN + 1e-12));
		for (int i = 0; i < HIDDEN; i++)
			v[i] = (float)(v[i] - mean) * inv * g[i] + b[i];
	}
}

static void gelu(float *x, size_t n)
{
	const float c = 0.7978845608f; /* sqrt(2 / pi) */
	for (size_t i = 0; i < n; i++) {
		float v = x[i];
		x[i] = 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
	}
}

static void softmax_rows(float *x, size_t rows, int n)
{
	for (size_t r = 0; r < rows; r++) {
		float *v = x + r * (size_t)n, mx = v[0], sum = 0;
		for (int i = 1; i < n; i++)
			mx = v[i] > mx ? v[i] : mx;
		for (int i = 0; i < n; i++)
			sum += v[i] = expf(v[i] - mx);
		for (int i = 0; i < n; i++)
			v[i] /= sum;
	}
}

/* ---- tokenisation ------------------------------------------------------------------------- */

/* Hashing tokenizer: [CLS]=1 words... [SEP]=2, padded with 0 up to seq. */
static void tokenise(const char *text, int *ids, int seq)
{
	int n = 0;
	ids[n++] = 1;
	const char *p = text;
	while (*p && n < seq - 1) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		uint32_t h = 2166136261u;
		while (*p && *p != ' ')
			h = (h ^ (uint32_t)tolower((unsigned char)*p++)) * 16777619u;
		ids[n++] = 3 + (int)(h % (VOCAB - 3));
	}
	if (n < seq)
		ids[n++] = 2;
	while (n < seq)
		ids[n++] = 0;
}

/* ---- one inference ------------------------------------------------------------------------ */

static void forward(struct model *m)
{
	const int B = m->cfg.batch, S = m->cfg.seq, M = B * S;
	op_begin(&m->op_gather);
	for (int t = 0; t < M; t++)
		memcpy(m->x + (size_t)t * HIDDEN, m->word + (size_t)m->ids[t] * HIDDEN,
		       HIDDEN * sizeof(float));
	op_end(&m->op_gather);
	op_begin(&m->op_addpos);
	for (int t = 0; t < M; t++)
		for (int i = 0; i < HIDDEN; i++)
			m->x[(size_t)t * HIDDEN + i] += m->pos[(size_t)(t % S) * HIDDEN + i];
	op_end(&m->op_addpos);
	op_begin(&m->op_embln);
	layer_norm(m->x, m->emb_g, m->emb_b, M);
	op_end(&m->op_embln);

	const float scale = 1.0f / sqrtf((float)HEAD_DIM);
	for (int l = 0; l < m->cfg.layers; l++) {
		struct layer *L = &m->layers[l];
		op_begin(&L->op_q);
		linear_fwd(&L->q, m->x, m->q, M, 0);
		op_end(&L->op_q);
		op_begin(&L->op_k);
		linear_fwd(&L->k, m->x, m->k, M, 0);
		op_end(&L->op_k);
		op_begin(&L->op_v);
		linear_fwd(&L->v, m->x, m->v, M, 0);
		op_end(&L->op_v);

		op_begin(&L->op_scores);
		for (int b = 0; b < B; b++)
			for (int h = 0; h < HEADS; h++)
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, S, S, HEAD_DIM,
				            scale, m->q + (size_t)b * S * HIDDEN + h * HEAD_DIM,
				            HIDDEN, m->k + (size_t)b * S * HIDDEN + h * HEAD_DIM,
				            HIDDEN, 0.0f,
				            m->probs + ((size_t)b * HEADS + h) * S * S, S);
		op_end(&L->op_scores);
		op_begin(&L->op_softmax);
		softmax_rows(m->probs, (size_t)B * HEADS * S, S);
		op_end(&L->op_softmax);
		op_begin(&L->op_context);
		for (int b = 0; b < B; b++)
			for (int h = 0; h < HEADS; h++)
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, S, HEAD_DIM,
				            S, 1.0f, m->probs + ((size_t)b * HEADS + h) * S * S, S,
				            m->v + (size_t)b * S * HIDDEN + h * HEAD_DIM, HIDDEN,
				            0.0f, m->ctx + (size_t)b * S * HIDDEN + h * HEAD_DIM,
				            HIDDEN);
		op_end(&L->op_context);

		/* Output projection with the residual fused (post op "sum"): x += ctx * Wo + bo. */
		op_begin(&L->op_o);
		linear_fwd(&L->o, m->ctx, m->x, M, 1);
		op_end(&L->op_o);
		op_begin(&L->op_ln1);
		layer_norm(m->x, L->ln1_g, L->ln1_b, M);
		op_end(&L->op_ln1);

		op_begin(&L->op_up);
		linear_fwd(&L->up, m->x, m->ffn, M, 0);
		op_end(&L->op_up);
		op_begin(&L->op_gelu);
		gelu(m->ffn, (size_t)M * FFN);
		op_end(&L->op_gelu);
		op_begin(&L->op_down);
		linear_fwd(&L->down, m->ffn, m->x, M, 1);
		op_end(&L->op_down);
		op_begin(&L->op_ln2);
		layer_norm(m->x, L->ln2_g, L->ln2_b, M);
		op_end(&L->op_ln2);
	}

	/* Pooler over the [CLS] token of each sequence, then the classifier. */
	for (int b = 0; b < B; b++)
		memcpy(m->pooled_in + (size_t)b * HIDDEN, m->x + (size_t)b * S * HIDDEN,
		       HIDDEN * sizeof(float));
	op_begin(&m->op_pool);
	linear_fwd(&m->pool, m->pooled_in, m->pooled, B, 0);
	for (int i = 0; i < B * HIDDEN; i++)
		m->pooled[i] = tanhf(m->pooled[i]);
	op_end(&m->op_pool);
	op_begin(&m->op_cls);
	linear_fwd(&m->cls, m->pooled, m->logits, B, 0);
	op_end(&m->op_cls);
}

/* The capture calls of forward() in the same order with the kernels left out: the
 * benchmark times this to measure what the instrumentation itself costs per step, a figure
 * that the noise of a busy machine cannot hide the way it hides a 0.1 % difference between two
 * full runs. */
static void forward_calls_only(const struct model *m)
{
	op_begin(&m->op_gather), op_end(&m->op_gather);
	op_begin(&m->op_addpos), op_end(&m->op_addpos);
	op_begin(&m->op_embln), op_end(&m->op_embln);
	for (int l = 0; l < m->cfg.layers; l++) {
		const struct layer *L = &m->layers[l];
		const struct opinfo *seq[] = {
		    &L->op_q, &L->op_k,   &L->op_v,  &L->op_scores, &L->op_softmax, &L->op_context,
		    &L->op_o, &L->op_ln1, &L->op_up, &L->op_gelu,   &L->op_down,    &L->op_ln2};
		for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++)
			op_begin(seq[i]), op_end(seq[i]);
	}
	op_begin(&m->op_pool), op_end(&m->op_pool);
	op_begin(&m->op_cls), op_end(&m->op_cls);
}

/* ---- main --------------------------------------------------------------------------------- */

static double clock_ms(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: bert_mini [--layers N] [--steps N] [--warmup N] [--seq N] [--batch N]\n"
	        "                 [--threads N] [--quiet] [--no-compute]\n"
	        "  Runs a BERT-mini-like encoder on CPU (OpenBLAS) and prints each step's\n"
	        "  latency and a checksum of the logits. Capture with TPUPROF=1 or 2 and\n"
	        "  TPUPROF_DIR=DIR; convert with `tpuprof DIR/tpuprof_data_dev0-0.PID OUT`.\n"
	        "  Defaults: --layers 4 --steps 20 --warmup 2 --seq 64 --batch 2 --threads 1\n"
	        "  --no-compute makes only the capture calls of each step (overhead benchmark).\n");
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* --ab report: step CPU time with capture calls (even steps) and without (odd steps), and the
 * median of the paired differences (step 2k minus step 2k+1), the overhead figure that other
 * load on the machine disturbs least. */
static void print_ab(const double *cpu, int steps, int warmup)
{
	int first = warmup + warmup % 2, n = 0;
	double *on = xcalloc((size_t)steps, sizeof *on), *off = xcalloc((size_t)steps, sizeof *off);
	double *diff = xcalloc((size_t)steps, sizeof *diff);
	for (int s = first; s + 1 < steps; s += 2, n++) {
		on[n] = cpu[s];
		off[n] = cpu[s + 1];
		diff[n] = cpu[s] - cpu[s + 1];
	}
	if (n) {
		double mon = median(on, n), moff = median(off, n), md = median(diff, n);
		printf("ab: %d pairs, step cpu with capture calls %.6f ms, without %.6f ms, "
		       "paired difference %.3f us (%.3f%%)\n",
		       n, mon, moff, md * 1e3, md / moff * 100);
	}
	free(on), free(off), free(diff);
}

/* Static, not on main's stack: the capture is written at exit, after main returns, and the
 * operator descriptors inside must still be valid then. */
static struct model m;

/* Reads the options into *c. Returns -1 to go on, else the exit status (0 after --help). */
static int parse_args(int argc, char **argv, struct config *c)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int *dst = NULL, lo = 1, hi = 0;
		if (!strcmp(a, "--quiet")) {
			c->quiet = 1;
			continue;
		}
		if (!strcmp(a, "--no-compute")) {
			c->no_compute = 1;
			continue;
		}
		if (!strcmp(a, "--ab")) {
			c->ab = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--layers"))
			dst = &c->layers, hi = 64;
		else if (!strcmp(a, "--steps"))
			dst = &c->steps, hi = 1000000;
		else if (!strcmp(a, "--warmup"))
			dst = &c->warmup, lo = 0, hi = 1000000;
		else if (!strcmp(a, "--seq"))
			dst = &c->seq, lo = 2, hi = MAX_SEQ;
		else if (!strcmp(a, "--batch"))
			dst = &c->batch, hi = 256;
		else if (!strcmp(a, "--threads"))
			dst = &c->threads, hi = 256;
		if (!dst || i + 1 >= argc || parse_int(argv[i + 1], lo, hi, dst)) {
			fprintf(stderr, "bert_mini: bad option '%s'%s%s\n", a,
			        i + 1 < argc ? " " : "", i + 1 < argc && dst ? argv[i + 1] : "");
			usage(stderr);
			return 1;
		}
		i++;
	}
	return -1;
}

/* One step: data prep, the forward pass and post-processing (the class histogram and the
 * checksum), inside a step range when g_record. */
static void run_step(const struct config *c, int step, int warm, int64_t *class_hist,
                     double *checksum)
{
	char meta[128];
	if (g_record)
		tpuprof_step_begin("bert_mini", step, warm);

	snprintf(meta, sizeof meta, "batch %d, seq %d, sentences %d..%d", c->batch, c->seq,
	         (step * c->batch) % (int)NSENT, (step * c->batch + c->batch - 1) % (int)NSENT);
	if (g_record)
		tpuprof_activity_begin("data prep", step, meta);
	for (int b = 0; b < c->batch; b++)
		tokenise(sentences[(size_t)(step * c->batch + b) % NSENT],
		         m.ids + (size_t)b * c->seq, c->seq);
	if (g_record)
		tpuprof_activity_end("data prep", step, NULL);

	if (c->no_compute)
		forward_calls_only(&m);
	else
		forward(&m);

	if (g_record)
		tpuprof_activity_begin("postprocess", step, "softmax over 4 classes, argmax");
	for (int b = 0; b < c->batch; b++) {
		float *lg = m.logits + (size_t)b * CLASSES;
		int best = 0;
		for (int k = 0; k < CLASSES; k++) {
			*checksum += (double)lg[k] * (double)(k + 1) * (double)(b + 1);
			if (lg[k] > lg[best])
				best = k;
		}
		class_hist[best]++;
	}
	if (g_record) {
		tpuprof_activity_end("postprocess", step, NULL);
		tpuprof_step_end("bert_mini", step);
	}
}

int main(int argc, char **argv)
{
	struct config c = {4, 20, 2, 64, 2, 1, 0, 0, 0};
	int st = parse_args(argc, argv, &c);
	if (st >= 0)
		return st;
#ifdef BERT_MINI_OPENBLAS
	/* One thread by default: results are bit-identical run to run, and the benchmark
	 * measures the capture's overhead rather than thread scheduling noise. */
	openblas_set_num_threads(c.threads);
#endif

	/* Run metadata for the reports: throughput counts samples, so they need the batch. */
	char run_meta[32];
	snprintf(run_meta, sizeof run_meta, "%d", c.batch);
	tpuprof_meta("batch_size", run_meta);
	snprintf(run_meta, sizeof run_meta, "%d", c.seq);
	tpuprof_meta("seq_len", run_meta);
	snprintf(run_meta, sizeof run_meta, "%d", c.layers);
	tpuprof_meta("layers", run_meta);
	tpuprof_meta("model", "bert_mini");

	tpuprof_activity_begin("load weights", -1, "deterministic pseudo-random weights");
	model_init(&m, &c);
	tpuprof_activity_end("load weights", -1, NULL);

	/* Wall latency is what users see; the thread's CPU time is printed too because it is far
	 * less disturbed by other load on the machine, which matters for the overhead benchmark
	 * (with --threads 1 all the work is on this thread). */
	double sum_ms = 0, sum_cpu_ms = 0, checksum = 0;
	int counted = 0;
	int64_t *class_hist = xcalloc(CLASSES, sizeof *class_hist);
	double *step_cpu = xcalloc((size_t)c.steps, sizeof *step_cpu);
	for (int step = 0; step < c.steps; step++) {
		int warm = step < c.warmup;
		/* --ab: even steps make their capture calls, odd steps skip them, so each pair of
		 * neighbouring steps compares with and without capture under the same machine load.
		 */
		g_record = !c.ab || step % 2 == 0;
		double t0 = clock_ms(CLOCK_MONOTONIC), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
		run_step(&c, step, warm, class_hist, &checksum);
		double ms = clock_ms(CLOCK_MONOTONIC) - t0;
		double cpu = clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0;
		step_cpu[step] = cpu;
		if (!warm) {
			sum_ms += ms;
			sum_cpu_ms += cpu;
			counted++;
		}
		if (!c.quiet)
			printf("step %d%s: %.3f ms\n", step, warm ? " (warm-up)" : "", ms);
	}
	printf("layers %d, seq %d, batch %d, steps %d (%d warm-up)\n", c.layers, c.seq, c.batch,
	       c.steps, c.warmup < c.steps ? c.warmup : c.steps);
	if (counted)
		printf("mean latency: %.6f ms over %d non-warm-up steps (thread cpu %.6f ms)\n",
		       sum_ms / counted, counted, sum_cpu_ms / counted);
	printf("classes: %lld %lld %lld %lld\n", (long long)class_hist[0], (long long)class_hist[1],
	       (long long)class_hist[2], (long long)class_hist[3]);
	printf("checksum: %.9e\n", checksum);
	if (c.ab)
		print_ab(step_cpu, c.steps, c.warmup);
	free(step_cpu);
	free(class_hist);
	model_free(&m);
	return 0;
}
