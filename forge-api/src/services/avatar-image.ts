/**
 * Avatar processing as Gitea's avatar.ProcessAvatarImage does it: only PNG, JPEG, GIF and WebP
 * within [avatar] MAX_WIDTH x MAX_HEIGHT; a file under MAX_ORIGIN_SIZE is kept as uploaded
 * (an animated PNG or GIF keeps its animation); a larger one is cropped to its centre square,
 * scaled bilinearly to 512 x 512 (DefaultAvatarSize 256 x RENDERED_SIZE_FACTOR 2) and encoded as
 * PNG, unless that PNG is larger than the upload, which is then kept.
 *
 * Decoding uses small pure-JS codecs (pngjs, jpeg-js, omggif): no native build step, and the
 * pixel work (crop, bilinear scale) is a few lines here. No well-kept pure-JS WebP decoder
 * exists, so a large WebP is kept as uploaded (a browser shows it as it is).
 */
import { GifReader } from 'omggif';
import * as jpeg from 'jpeg-js';
import { PNG } from 'pngjs';
import { InvalidError } from './errors';
import { imageInfo } from './image-info';

/** Gitea's [avatar] defaults. */
export const AVATAR_MAX_SIDE = 4096;
const MAX_ORIGIN_SIZE = 262144;
const TARGET_SIZE = 512;

interface Pixels {
  width: number;
  height: number;
  /** RGBA, not premultiplied, row by row */
  data: Uint8Array;
}

function decode(data: Buffer, type: 'png' | 'jpeg' | 'gif'): Pixels {
  try {
    if (type === 'png') {
      const png = PNG.sync.read(data);
      return { width: png.width, height: png.height, data: png.data };
    }
    if (type === 'jpeg') return jpeg.decode(data, { useTArray: true, formatAsRGBA: true, maxMemoryUsageInMB: 256 });
    const gif = new GifReader(data);
    const pixels = new Uint8Array(gif.width * gif.height * 4);
    gif.decodeAndBlitFrameRGBA(0, pixels);
    return { width: gif.width, height: gif.height, data: pixels };
  } catch (err) {
    throw new InvalidError(`image.Decode: ${(err as Error).message}`);
  }
}

/** The largest centred square (Gitea's cropSquare: integer halves of the difference). */
function cropSquare(src: Pixels): Pixels {
  if (src.width === src.height) return src;
  const size = Math.min(src.width, src.height);
  const x0 = src.width > src.height ? Math.floor((src.width - size) / 2) : 0;
  const y0 = src.height > src.width ? Math.floor((src.height - size) / 2) : 0;
  const out = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++) {
    const from = ((y0 + y) * src.width + x0) * 4;
    out.set(src.data.subarray(from, from + size * 4), y * size * 4);
  }
  return { width: size, height: size, data: out };
}

/**
 * Bilinear scaling with pixel centres mapped onto each other, interpolating premultiplied colour
 * (as Go's image/draw does on its premultiplied RGBA), so transparent pixels do not bleed.
 */
function scaleBilinear(src: Pixels, w: number, h: number): Pixels {
  const out = new Uint8Array(w * h * 4);
  const pre = new Float32Array(src.width * src.height * 4);
  for (let i = 0; i < pre.length; i += 4) {
    const a = src.data[i + 3];
    pre[i] = (src.data[i] * a) / 255;
    pre[i + 1] = (src.data[i + 1] * a) / 255;
    pre[i + 2] = (src.data[i + 2] * a) / 255;
    pre[i + 3] = a;
  }
  const sx = src.width / w;
  const sy = src.height / h;
  for (let y = 0; y < h; y++) {
    const fy = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), src.height - 1);
    const y0 = Math.floor(fy);
    const row0 = y0 * src.width;
    const row1 = Math.min(y0 + 1, src.height - 1) * src.width;
    const wy = fy - y0;
    for (let x = 0; x < w; x++) {
      const fx = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), src.width - 1);
      const x0 = Math.floor(fx);
      const x1 = Math.min(x0 + 1, src.width - 1);
      const wx = fx - x0;
      const a00 = (row0 + x0) * 4, a01 = (row0 + x1) * 4, a10 = (row1 + x0) * 4, a11 = (row1 + x1) * 4;
      const o = (y * w + x) * 4;
      const alpha = (pre[a00 + 3] * (1 - wx) + pre[a01 + 3] * wx) * (1 - wy) + (pre[a10 + 3] * (1 - wx) + pre[a11 + 3] * wx) * wy;
      for (let c = 0; c < 3; c++) {
        const v = (pre[a00 + c] * (1 - wx) + pre[a01 + c] * wx) * (1 - wy) + (pre[a10 + c] * (1 - wx) + pre[a11 + c] * wx) * wy;
        out[o + c] = alpha > 0 ? Math.round(Math.min(255, (v * 255) / alpha)) : 0;
      }
      out[o + 3] = Math.round(alpha);
    }
  }
  return { width: w, height: h, data: out };
}

/** PNG, RGB when every pixel is opaque (as Go's encoder does), RGBA otherwise. */
function encodePng(p: Pixels): Buffer {
  let opaque = true;
  for (let i = 3; i < p.data.length && opaque; i += 4) opaque = p.data[i] === 255;
  const png = new PNG({ width: p.width, height: p.height });
  png.data = Buffer.from(p.data.buffer, p.data.byteOffset, p.data.byteLength);
  return PNG.sync.write(png, { colorType: opaque ? 2 : 6 });
}

/**
 * The bytes to store for an uploaded avatar; InvalidError (with Gitea's wording) when the data
 * is no supported image or too large in pixels; `prefix` starts its message (Gitea names the
 * kind of avatar there).
 */
export function processAvatarImage(data: Buffer, prefix = ''): Buffer {
  try {
    return process(data);
  } catch (err) {
    if (err instanceof InvalidError) throw new InvalidError(prefix + err.message);
    throw err;
  }
}

function process(data: Buffer): Buffer {
  const info = imageInfo(data);
  if (!info) throw new InvalidError('image.DecodeConfig: image: unknown format');
  if (info.width > AVATAR_MAX_SIDE) throw new InvalidError(`image width is too large: ${info.width} > ${AVATAR_MAX_SIDE}`);
  if (info.height > AVATAR_MAX_SIDE) throw new InvalidError(`image height is too large: ${info.height} > ${AVATAR_MAX_SIDE}`);
  if (data.length < MAX_ORIGIN_SIZE || info.type === 'webp') return data;
  const resized = encodePng(scaleBilinear(cropSquare(decode(data, info.type)), TARGET_SIZE, TARGET_SIZE));
  return data.length <= resized.length ? data : resized;
}
