/* image.c -- PNG (libpng) and JPEG (libjpeg) files <-> (H, W, C) uint8 tensors,
 * for chainer.datasets.ImageDataset and friends.
 *
 * The format comes from the file's magic bytes, not its name.  PNG goes
 * through libpng's simplified API, which expands palettes and low bit depths
 * and keeps the channels the file has (gray, gray+alpha, RGB, RGBA); 16-bit
 * samples come back as 8-bit.  JPEG decodes to gray or RGB (CMYK and YCCK
 * files are converted by libjpeg where it can).
 *
 * libjpeg reports errors through a callback that must not return; the
 * default one calls exit().  We jump back to the decoding function with
 * setjmp/longjmp instead, a jump that never leaves this file, and turn the
 * error into a ch_status like everything else. */
#include "../core/internal.h"
#include "atomic.h"

#include <errno.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

/* ---- the decompression-bomb limit --------------------------------------- */
/* A header of a few bytes can claim 65535 x 65535 pixels: the size is checked
 * against this limit before anything is allocated.  The default is Pillow's
 * (2 * Image.MAX_IMAGE_PIXELS, where Pillow raises DecompressionBombError),
 * so the images Chainer's ImageDataset reads are the ones chainlua reads. */
#define CH_IMAGE_DEFAULT_MAX_PIXELS 178956970LL
static _Atomic int64_t max_pixels = CH_IMAGE_DEFAULT_MAX_PIXELS;

int64_t ch_image_max_pixels(int64_t limit) {
    if (limit < 0) return max_pixels;
    return atomic_exchange(&max_pixels, limit == 0 ? CH_IMAGE_DEFAULT_MAX_PIXELS : limit);
}

static ch_status check_pixels(const char *what, uint64_t height, uint64_t width) {
    int64_t limit = max_pixels;
    if (height * width > (uint64_t)limit)
        return ch_fail(CH_ERR_FORMAT,
                       "load_image: %s: %llu x %llu pixels is more than the limit of %lld (a decompression bomb?); "
                       "raise it with chainer.datasets.max_image_pixels(n)",
                       what, (unsigned long long)width, (unsigned long long)height, (long long)limit);
    return CH_OK;
}

/* ---- PNG ------------------------------------------------------------------ */
/* `what` names the image in errors: a path, or "'archive.zip' member 'a.png'". */
static ch_status finish_png(png_image *img, const char *what, ch_tensor **result) {
    /* keep gray/color and alpha as stored; 8 bits per sample */
    img->format = img->format & (PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA);
    ch_status big = check_pixels(what, img->height, img->width);
    if (big != CH_OK) {
        png_image_free(img);
        return big;
    }
    int64_t dim[3] = {img->height, img->width, PNG_IMAGE_SAMPLE_CHANNELS(img->format)};
    ch_tensor *t;
    ch_status st = ch_tensor_new(CH_UINT8, 3, dim, CH_CPU, &t);
    if (st != CH_OK) {
        png_image_free(img);
        return st;
    }
    if (!png_image_finish_read(img, NULL, t->data, 0, NULL)) {
        ch_tensor_release(t);
        return ch_fail(CH_ERR_FORMAT, "load_image: %s: corrupt PNG data (%s)", what, img->message);
    }
    *result = t;
    return CH_OK;
}

static ch_status load_png(const char *path, const char *what, const void *mem, size_t n, ch_tensor **result) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    int ok = mem ? png_image_begin_read_from_memory(&img, mem, n) : png_image_begin_read_from_file(&img, path);
    if (!ok) return ch_fail(CH_ERR_FORMAT, "load_image: %s: cannot read the PNG (%s)", what, img.message);
    return finish_png(&img, what, result);
}

static ch_status save_png(const char *path, const ch_tensor *t, int64_t h, int64_t w, int64_t c) {
    static const png_uint_32 formats[5] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)w;
    img.height = (png_uint_32)h;
    img.format = formats[c];
    ch_atomic_file af;
    CH_TRY(ch_atomic_open(&af, path, 1, "save_image"));
    if (!png_image_write_to_stdio(&img, af.fp, 0, ch_base(t), 0, NULL)) {
        ch_atomic_abort(&af);
        return ch_fail(CH_ERR_IO, "save_image: cannot write the PNG '%s' (%s)", path, img.message);
    }
    return ch_atomic_commit(&af, "save_image");
}

/* ---- JPEG ----------------------------------------------------------------- */
typedef struct jerr {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} jerr;

static void jerr_exit(j_common_ptr cinfo) {
    jerr *e = (jerr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jump, 1);
}

static void jerr_silent(j_common_ptr cinfo) { CH_UNUSED(cinfo); }

/* Warnings pass, except running out of data: libjpeg would pad the rest of a
 * truncated file with gray and decode every remaining row of it; Pillow calls
 * that "image file is truncated", and so do we. */
static void jerr_emit(j_common_ptr cinfo, int msg_level) {
    if (msg_level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
        jerr *e = (jerr *)cinfo->err;
        snprintf(e->msg, sizeof e->msg, "the file is truncated");
        longjmp(e->jump, 1);
    }
}

/* From fp, or from mem (n bytes) when fp is NULL. */
static ch_status load_jpeg(const char *what, FILE *fp, const void *mem, size_t n, ch_tensor **result) {
    struct jpeg_decompress_struct cinfo;
    jerr e;
    /* volatile: modified between setjmp and a possible longjmp */
    ch_tensor *volatile t = NULL;
    cinfo.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jerr_exit;
    e.mgr.output_message = jerr_silent;
    e.mgr.emit_message = jerr_emit;
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&cinfo);
        ch_tensor_release(t);
        return ch_fail(CH_ERR_FORMAT, "load_image: %s: corrupt JPEG data (%s)", what, e.msg);
    }
    jpeg_create_decompress(&cinfo);
    if (fp)
        jpeg_stdio_src(&cinfo, fp);
    else
        jpeg_mem_src(&cinfo, (const unsigned char *)mem, (unsigned long)n);
    jpeg_read_header(&cinfo, TRUE);
    ch_status big = check_pixels(what, cinfo.image_height, cinfo.image_width);
    if (big != CH_OK) {
        jpeg_destroy_decompress(&cinfo);
        return big;
    }
    if (cinfo.jpeg_color_space != JCS_GRAYSCALE) cinfo.out_color_space = JCS_RGB;
    jpeg_start_decompress(&cinfo);
    int64_t dim[3] = {cinfo.output_height, cinfo.output_width, cinfo.output_components};
    ch_tensor *nt;
    ch_status st = ch_tensor_new(CH_UINT8, 3, dim, CH_CPU, &nt);
    if (st != CH_OK) {
        jpeg_destroy_decompress(&cinfo);
        return st;
    }
    t = nt;
    size_t stride = (size_t)dim[1] * (size_t)dim[2];
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = (JSAMPROW)((char *)t->data + (size_t)cinfo.output_scanline * stride);
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    *result = t;
    return CH_OK;
}

static ch_status save_jpeg(const char *path, const ch_tensor *t, int64_t h, int64_t w, int64_t c, int quality) {
    struct jpeg_compress_struct cinfo;
    jerr e;
    ch_atomic_file af;
    CH_TRY(ch_atomic_open(&af, path, 1, "save_image"));
    cinfo.err = jpeg_std_error(&e.mgr);
    e.mgr.error_exit = jerr_exit;
    e.mgr.output_message = jerr_silent;
    if (setjmp(e.jump)) {
        jpeg_destroy_compress(&cinfo);
        ch_atomic_abort(&af);
        return ch_fail(CH_ERR_IO, "save_image: cannot write the JPEG '%s' (%s)", path, e.msg);
    }
    jpeg_create_compress(&cinfo);
    jpeg_stdio_dest(&cinfo, af.fp);
    cinfo.image_width = (JDIMENSION)w;
    cinfo.image_height = (JDIMENSION)h;
    cinfo.input_components = (int)c;
    cinfo.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    size_t stride = (size_t)w * (size_t)c;
    const char *base = ch_base(t);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(base + (size_t)cinfo.next_scanline * stride);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    return ch_atomic_commit(&af, "save_image");
}

/* ---- entry points ----------------------------------------------------------- */
static int is_png(const unsigned char *magic, size_t got) { return got >= 8 && png_sig_cmp(magic, 0, 8) == 0; }
static int is_jpeg(const unsigned char *magic, size_t got) {
    return got >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF;
}

ch_status ch_image_load(const char *path, ch_tensor **result) {
    if (!path || !result) return ch_fail(CH_ERR_ARG, "load_image: NULL argument");
    FILE *fp = fopen(path, "rb");
    if (!fp) return ch_fail(CH_ERR_IO, "load_image: cannot open '%s' (%s)", path, strerror(errno));
    unsigned char magic[8] = {0};
    size_t got = fread(magic, 1, sizeof magic, fp);
    char what[1100];
    snprintf(what, sizeof what, "'%s'", path);
    ch_status st;
    if (is_png(magic, got)) {
        fclose(fp);
        st = load_png(path, what, NULL, 0, result);
    } else if (is_jpeg(magic, got)) {
        rewind(fp);
        st = load_jpeg(what, fp, NULL, 0, result);
        fclose(fp);
    } else {
        fclose(fp);
        st = ch_fail(CH_ERR_FORMAT, "load_image: '%s' is neither a PNG nor a JPEG file (unknown magic bytes)", path);
    }
    return st;
}

ch_status ch_image_decode(const ch_tensor *bytes, const char *what, ch_tensor **result) {
    static const char *fn = "decode_image";
    if (!result) return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_CHECK_ARG(bytes, fn, "bytes");
    if (!what) what = "the image";
    if (bytes->dt != CH_UINT8 || bytes->nd != 1)
        return ch_fail(CH_ERR_DTYPE, "%s: %s: expected a 1-D uint8 tensor of file bytes", fn, what);
    if (bytes->dev != CH_CPU)
        return ch_fail(CH_ERR_DEVICE, "%s: %s: the bytes must be on the CPU", fn, what);
    ch_tensor *c = NULL;
    CH_TRY(ch_contiguous(bytes, &c));
    const unsigned char *mem = (const unsigned char *)ch_base(c);
    size_t n = (size_t)c->dim[0];
    ch_status st;
    if (is_png(mem, n))
        st = load_png(NULL, what, mem, n, result);
    else if (is_jpeg(mem, n))
        st = load_jpeg(what, NULL, mem, n, result);
    else
        st = ch_fail(CH_ERR_FORMAT, "load_image: %s is neither a PNG nor a JPEG image (unknown magic bytes)", what);
    ch_tensor_release(c);
    return st;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

ch_status ch_image_save(const char *path, const ch_tensor *t, int quality) {
    static const char *fn = "save_image";
    if (!path) return ch_fail(CH_ERR_ARG, "%s: NULL path", fn);
    CH_CHECK_ARG(t, fn, "image");
    if (t->dt != CH_UINT8)
        return ch_fail(CH_ERR_DTYPE, "%s: the image must be uint8 (got %s)", fn, ch_dtype_name((ch_dtype)t->dt));
    if (t->nd != 2 && t->nd != 3)
        return ch_fail(CH_ERR_SHAPE, "%s: the image must be (H, W) or (H, W, C) (got %d dimensions)", fn, t->nd);
    int64_t h = t->dim[0], w = t->dim[1], c = t->nd == 3 ? t->dim[2] : 1;
    if (h < 1 || w < 1 || h > 0x7fffffff || w > 0x7fffffff)
        return ch_fail(CH_ERR_SHAPE, "%s: the image must have at least one row and one column", fn);
    int jpeg = ends_with(path, ".jpg") || ends_with(path, ".jpeg");
    if (!jpeg && !ends_with(path, ".png"))
        return ch_fail(CH_ERR_ARG, "%s: '%s': unknown extension (expected .png, .jpg or .jpeg)", fn, path);
    if (jpeg && c != 1 && c != 3)
        return ch_fail(CH_ERR_SHAPE, "%s: a JPEG has 1 or 3 channels (got %lld)", fn, (long long)c);
    if (c < 1 || c > 4)
        return ch_fail(CH_ERR_SHAPE, "%s: a PNG has 1 to 4 channels (got %lld)", fn, (long long)c);
    if (jpeg && (quality < 1 || quality > 100))
        return ch_fail(CH_ERR_ARG, "%s: quality must be in 1..100 (got %d)", fn, quality);
    /* the encoders read host memory: a contiguous copy on the CPU (t itself
     * when it already is one) */
    ch_tensor *ct;
    if (t->dev == CH_CPU) {
        CH_TRY(ch_contiguous(t, &ct));
    } else {
        CH_TRY(ch_to_device(t, CH_CPU, &ct));
    }
    ch_status st = jpeg ? save_jpeg(path, ct, h, w, c, quality) : save_png(path, ct, h, w, c);
    ch_tensor_release(ct);
    return st;
}
