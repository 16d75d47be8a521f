/* Host stub of ESP-IDF's esp_err.h for the ESP-Claw harness (MIT license). */
#pragma once
#include <stdint.h>
#include <string.h>
typedef int esp_err_t;
#define ESP_OK 0
#define ESP_FAIL -1
#define ESP_ERR_NO_MEM 0x101
#define ESP_ERR_INVALID_ARG 0x102
#define ESP_ERR_INVALID_STATE 0x103
#define ESP_ERR_INVALID_SIZE 0x104
#define ESP_ERR_NOT_FOUND 0x105
#define ESP_ERR_NOT_SUPPORTED 0x106
#define ESP_ERR_TIMEOUT 0x107
#define ESP_ERR_INVALID_RESPONSE 0x108
const char *esp_err_to_name(esp_err_t code);
/* newlib has strlcpy; glibc only from 2.38 */
size_t harness_strlcpy(char *dst, const char *src, size_t size);
#define strlcpy harness_strlcpy
