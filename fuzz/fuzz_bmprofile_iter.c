/*
 * fuzz_bmprofile_iter.c — libFuzzer target for the bmprofile binary parsers (src/readers/sophgo):
 * the iter<N>.profile block walk with every record decoder over the blocks it accepts, and the
 * cmd_*.dat command-buffer decoders, each for BM1688, BM1684X, BM1684 (with the reader's
 * COMMAND-count limit) and CV184X (which has no hand-written decoder any more), plus the table
 * decoder (desc.c) of BM1688, CV184X and BM1690 with every field and the TIU cost model of each
 * command. Any bytes must give a status (with a message on error), never a crash, leak or
 * out-of-bounds read.
 */
#include "readers/sophgo/bmprofile/bmp_int.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void records(enum tp_arch arch, const uint8_t *data, const struct bmp_iter *it)
{
	size_t gs = bmp_gdma_rec_size(arch), ts = bmp_tiu_rec_size(arch);
	for (unsigned k = 0; k < it->n_bd; k++)
		for (size_t i = 0; i + ts <= it->bd[k].len; i += ts) {
			struct bmp_tiu_rec r;
			if (arch == TP_ARCH_CV184X)
				bmp_tiu_decode_id_first(data + it->bd[k].off + i, &r);
			else
				bmp_tiu_decode(data + it->bd[k].off + i, &r);
			sink += r.start ^ r.end ^ r.inst_id;
		}
	for (unsigned k = 0; k < it->n_gdma; k++)
		for (size_t i = 0; i + gs <= it->gdma[k].len; i += gs) {
			struct bmp_gdma_rec r;
			bmp_gdma_decode(arch, data + it->gdma[k].off + i, &r);
			sink += r.bytes ^ r.inst_id;
		}
	for (unsigned k = 0; k < it->n_dyn; k++)
		for (size_t i = 0; i + BMP_DYN_REC_SIZE <= it->dyn[k].len; i += BMP_DYN_REC_SIZE) {
			struct bmp_dyn_rec r;
			bmp_dyn_decode(data + it->dyn[k].off + i, &r);
			sink += r.id ^ r.begin;
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum tp_arch arches[4] = {TP_ARCH_BM1688, TP_ARCH_BM1684X, TP_ARCH_BM1684,
	                                       TP_ARCH_CV184X};
	for (int a = 0; a < 4; a++) {
		struct bmp_iter *it = malloc(sizeof *it);
		if (!it)
			return 0;
		struct tp_diag d = {0};
		int rc = bmp_walk(data, size, arches[a], "fuzz.profile", it, &d);
		if (rc == TP_OK)
			records(arches[a], data, it);
		else if (d.msg[0] == 0)
			abort(); /* an error must say what and where */
		free(it);
		for (int e = 0; e < 2; e++) {
			struct bmp_cmdbuf cb;
			if (bmp_cmdbuf_init(&cb, arches[a], e, data, size) != TP_OK)
				continue;
			/* BM1684's fixed slots stop at the COMMAND block's count (the reader's
			 * limit; the first byte stands in for it): nothing is found past it. */
			uint32_t limit = UINT32_MAX;
			if (arches[a] == TP_ARCH_BM1684 && size > 0) {
				limit = data[0];
				bmp_cmdbuf_limit(&cb, limit);
			}
			struct bmp_cmd c;
			/* Forward lookups (indexing lazily as they go), the rest of the index, then
			 * a backwards jump through it. The lazy lookups find exactly the commands
			 * the whole index holds. */
			uint32_t id = 1;
			for (; id <= 4096 && bmp_cmdbuf_get(&cb, id, &c); id++)
				sink += c.key + (uint64_t)c.name[0] + (uint64_t)c.type[0];
			if (bmp_cmdbuf_finish(&cb) != TP_OK) {
				bmp_cmdbuf_free(&cb);
				continue;
			}
			if (id - 1 != (cb.count < 4096 ? cb.count : 4096) || cb.count > limit)
				abort();
			if (cb.count && bmp_cmdbuf_get(&cb, 1, &c))
				sink += c.dep;
			if (bmp_cmdbuf_get(&cb, cb.count + 1, &c))
				abort();
			bmp_cmdbuf_free(&cb);
		}
	}
	/* The table decoders (built once each: they are immutable) of the chips the reader
	 * decodes with tables: every command, the fields of the first 512, the cost of TIU
	 * commands (BM1690 too, whose descriptors the cdm reader decodes with the same code). */
	static const enum tp_arch tarch[3] = {TP_ARCH_BM1688, TP_ARCH_CV184X, TP_ARCH_BM1690};
	static struct sg_decoder *decs[3];
	for (int a = 0; a < 3; a++) {
		const struct sg_chip *chip = sg_chip_by_arch(tarch[a]);
		if (!chip)
			abort();
		if (!decs[a] && sg_decoder_new(sg_isa_for_arch(tarch[a]), chip->dma_cmd_type_bits,
		                               &decs[a]) != TP_OK)
			abort(); /* the linked tables must be consistent */
		for (int e = 0; e < 2; e++) {
			struct bmp_cmdbuf cb;
			if (bmp_cmdbuf_init_dec(&cb, tarch[a], e, decs[a], data, size, 0) != TP_OK)
				continue;
			if (bmp_cmdbuf_finish(&cb) != TP_OK) {
				bmp_cmdbuf_free(&cb);
				continue;
			}
			struct bmp_cmd c;
			for (uint32_t id = 1; id <= cb.count && id <= 4096; id++) {
				if (!bmp_cmdbuf_get(&cb, id, &c) || !c.have_desc)
					abort(); /* the index pass decoded it */
				for (uint16_t i = 0; id <= 512 && i < c.desc.cls->rc->nfields; i++)
					sink += sg_field(&c.desc, c.raw, i);
				if (e == BMP_ENG_TIU) {
					struct tp_cost k;
					sg_tiu_cost(chip, &c.desc, c.raw, &k);
					sink += k.alg_ops ^ k.uarch_ops ^ k.alg_cycle;
				}
			}
			bmp_cmdbuf_free(&cb);
		}
	}
	return 0;
}
