from django.contrib import admin

from heatweb.models import ApiToken, Membership, Project


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "id", "created_at")
    search_fields = ("name", "id")
    inlines = [MembershipInline]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "user", "project", "created_at", "expires_at", "revoked_at")
    readonly_fields = ("prefix", "key_hash", "created_at")
    list_filter = ("revoked_at",)
