/**
 * Multipart uploads with a progress bar. fetch() cannot report upload progress, so this one call uses
 * XMLHttpRequest; the answer's type is still the one the OpenAPI document gives the operation.
 */

import { apiKey, keyRefused } from '../session';
import { ApiError, apiError } from './client';
import type { paths } from './schema';

export type PrintAnswer = paths['/print']['post']['responses'][200]['content']['application/json'];
export type QueueAnswer = paths['/queue']['post']['responses'][201]['content']['application/json'];

/** Sends `form` to `path`; `onProgress` gets the fraction of the body sent (0–1). */
export function upload<T>(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', path);
    if (apiKey.value) request.setRequestHeader('x-api-key', apiKey.value);
    request.responseType = 'json';
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      if (request.status >= 200 && request.status < 300) {
        onProgress(1);
        resolve(request.response as T);
        return;
      }
      if (request.status === 401) keyRefused();
      reject(apiError(request.status, request.response));
    };
    request.onerror = () => reject(new ApiError(0, 'the upload did not reach the service'));
    request.send(form);
  });
}
