/*
 * The avatar service as an nginx content handler: every request to a location
 * with `avatar N [TEMPLATE];` gets a 302 to one of N fox avatars, picked
 * uniformly at random, with an empty body.
 *
 *     load_module ngx_http_avatar_module.so;
 *     ...
 *     location / { avatar 21 "https://avatar.example/Renard-{n}.png"; }
 */

#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>


#define NGX_HTTP_AVATAR_MAX_IMAGES  65535


typedef struct {
    ngx_uint_t   images;   /* N; 0 when the location has no `avatar` */
    ngx_array_t *parts;    /* ngx_str_t: TEMPLATE split at each "{n}" */
    size_t       fixed;    /* the parts' total length */
} ngx_http_avatar_loc_conf_t;


static char *ngx_http_avatar(ngx_conf_t *cf, ngx_command_t *cmd, void *conf);
static void *ngx_http_avatar_create_loc_conf(ngx_conf_t *cf);


static ngx_command_t  ngx_http_avatar_commands[] = {

    { ngx_string("avatar"),
      NGX_HTTP_LOC_CONF|NGX_CONF_TAKE12,
      ngx_http_avatar,
      NGX_HTTP_LOC_CONF_OFFSET,
      0,
      NULL },

      ngx_null_command
};


static ngx_http_module_t  ngx_http_avatar_module_ctx = {
    NULL,                                  /* preconfiguration */
    NULL,                                  /* postconfiguration */

    NULL,                                  /* create main configuration */
    NULL,                                  /* init main configuration */

    NULL,                                  /* create server configuration */
    NULL,                                  /* merge server configuration */

    ngx_http_avatar_create_loc_conf,       /* create location configuration */
    NULL                                   /* merge location configuration */
};


ngx_module_t  ngx_http_avatar_module = {
    NGX_MODULE_V1,
    &ngx_http_avatar_module_ctx,           /* module context */
    ngx_http_avatar_commands,              /* module directives */
    NGX_HTTP_MODULE,                       /* module type */
    NULL,                                  /* init master */
    NULL,                                  /* init module */
    NULL,                                  /* init process */
    NULL,                                  /* init thread */
    NULL,                                  /* exit thread */
    NULL,                                  /* exit process */
    NULL,                                  /* exit master */
    NGX_MODULE_V1_PADDING
};


static ngx_int_t
ngx_http_avatar_handler(ngx_http_request_t *r)
{
    u_char                      *p;
    ngx_int_t                    rc;
    ngx_str_t                   *part;
    ngx_uint_t                   i, pick;
    ngx_table_elt_t             *h;
    ngx_http_avatar_loc_conf_t  *alcf;

    alcf = ngx_http_get_module_loc_conf(r, ngx_http_avatar_module);

    /* Any method gets the redirect; a request body is read and dropped. */
    rc = ngx_http_discard_request_body(r);
    if (rc != NGX_OK) {
        return rc;
    }

    /*
     * random() gives 31 bits, seeded per worker by nginx at its start;
     * multiply-shift maps them onto 1..N without a division.
     */
    pick = (ngx_uint_t) (((uint64_t) ngx_random() * alcf->images) >> 31) + 1;

    part = alcf->parts->elts;
    p = ngx_pnalloc(r->pool, alcf->fixed
                             + (alcf->parts->nelts - 1) * NGX_INT_T_LEN);
    if (p == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h = ngx_list_push(&r->headers_out.headers);
    if (h == NULL) {
        return NGX_HTTP_INTERNAL_SERVER_ERROR;
    }

    h->hash = 1;
#if (nginx_version >= 1023000)
    h->next = NULL;
#endif
    ngx_str_set(&h->key, "Location");
    h->value.data = p;

    p = ngx_cpymem(p, part[0].data, part[0].len);
    for (i = 1; i < alcf->parts->nelts; i++) {
        p = ngx_sprintf(p, "%ui", pick);
        p = ngx_cpymem(p, part[i].data, part[i].len);
    }
    h->value.len = p - h->value.data;

    r->headers_out.location = h;
    r->headers_out.status = NGX_HTTP_MOVED_TEMPORARILY;
    /* nginx's own table says "302 Moved Temporarily"; RFC 9110 says Found. */
    ngx_str_set(&r->headers_out.status_line, "302 Found");
    r->headers_out.content_length_n = 0;
    r->header_only = 1;

    return ngx_http_send_header(r);
}


static char *
ngx_http_avatar(ngx_conf_t *cf, ngx_command_t *cmd, void *conf)
{
    ngx_http_avatar_loc_conf_t *alcf = conf;

    u_char                    *start, *end, *n;
    ngx_int_t                  images;
    ngx_str_t                 *value, template, *part;
    ngx_http_core_loc_conf_t  *clcf;

    if (alcf->images) {
        return "is duplicate";
    }

    value = cf->args->elts;

    images = ngx_atoi(value[1].data, value[1].len);
    if (images < 1 || images > NGX_HTTP_AVATAR_MAX_IMAGES) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                           "avatar: N must be 1..%d, got \"%V\"",
                           NGX_HTTP_AVATAR_MAX_IMAGES, &value[1]);
        return NGX_CONF_ERROR;
    }

    if (cf->args->nelts == 3) {
        template = value[2];
    } else {
        ngx_str_set(&template, "https://avatar.example/Renard-{n}.png");
    }

    alcf->parts = ngx_array_create(cf->pool, 2, sizeof(ngx_str_t));
    if (alcf->parts == NULL) {
        return NGX_CONF_ERROR;
    }

    start = template.data;
    end = template.data + template.len;

    for ( ;; ) {
        n = ngx_strnstr(start, "{n}", end - start);

        part = ngx_array_push(alcf->parts);
        if (part == NULL) {
            return NGX_CONF_ERROR;
        }

        part->data = start;
        part->len = (n ? n : end) - start;
        alcf->fixed += part->len;

        if (n == NULL) {
            break;
        }

        start = n + 3;
    }

    alcf->images = images;

    clcf = ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module);
    clcf->handler = ngx_http_avatar_handler;

    return NGX_CONF_OK;
}


static void *
ngx_http_avatar_create_loc_conf(ngx_conf_t *cf)
{
    ngx_http_avatar_loc_conf_t  *conf;

    conf = ngx_pcalloc(cf->pool, sizeof(ngx_http_avatar_loc_conf_t));
    if (conf == NULL) {
        return NULL;
    }

    return conf;
}
